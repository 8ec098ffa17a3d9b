//! Beat files for `weft sim`: a table with one row per beat and one column per 32-bit lane, as
//! NumPy `.npy` (2-D, C order, `<f4` float32 or `<u4` uint32 bit patterns) or CSV (one line per
//! beat, lanes separated by commas; a value is a `0x` hex bit pattern or a decimal number taken
//! as binary32). Errors name the file and the line and column, or the shape.

use crate::Error;
use std::path::Path;

/// Rows of 32-bit lanes (bit patterns).
pub type Table = Vec<Vec<u32>>;

/// A beat file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// NumPy `.npy`.
    Npy,
    /// Comma-separated `.csv`.
    Csv,
}

impl Kind {
    /// The format of `path` from its extension (any case); another extension is an
    /// [`Error::Input`].
    pub fn of(path: &Path) -> Result<Kind, Error> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("npy") => Ok(Kind::Npy),
            Some("csv") => Ok(Kind::Csv),
            _ => Err(Error::Input(format!("{}: unknown file type: use .npy or .csv", path.display()))),
        }
    }
}

/// Reads a beat table from `path` (its kind from the extension).
pub fn read(path: &Path) -> Result<Table, Error> {
    let kind = Kind::of(path)?;
    let bytes = std::fs::read(path).map_err(|e| Error::from(e).context(path.display()))?;
    match kind {
        Kind::Npy => read_npy(&bytes).map_err(|e| e.context(path.display())),
        Kind::Csv => read_csv(&String::from_utf8_lossy(&bytes)).map_err(|e| Error::Input(format!("{}:{e}", path.display()))),
    }
}

/// Writes `table` (every row `columns` wide) to `path`: `.npy` as `float` (`<f4`) or `uint32`
/// (`<u4`), CSV as `0x` bit patterns when `hex`, else as shortest round-trip decimals.
pub fn write(path: &Path, table: &Table, columns: usize, float: bool) -> Result<(), Error> {
    let bytes = match Kind::of(path)? {
        Kind::Npy => write_npy(table, columns, float),
        Kind::Csv => write_csv(table, float).into_bytes(),
    };
    std::fs::write(path, bytes).map_err(|e| Error::from(e).context(path.display()))
}

fn read_csv(text: &str) -> Result<Table, Error> {
    let mut rows = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut row = vec![];
        let mut col = 1;
        for cell in line.split(',') {
            let value = cell.trim();
            let parsed = match value.strip_prefix("0x").or_else(|| value.strip_prefix("0X")) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => value.parse::<f32>().ok().map(f32::to_bits),
            };
            row.push(parsed.ok_or_else(|| Error::Input(format!("{}:{col}: `{value}` is not a number (a decimal, or a 0x bit pattern of at most 32 bits)", n + 1)))?);
            col += cell.len() + 1;
        }
        rows.push(row);
    }
    Ok(rows)
}

fn write_csv(table: &Table, float: bool) -> String {
    let cell = |v: &u32| {
        let x = f32::from_bits(*v);
        if float && x.is_finite() {
            format!("{x:?}")
        } else {
            format!("0x{v:08x}")
        }
    };
    table.iter().map(|row| row.iter().map(cell).collect::<Vec<_>>().join(",") + "\n").collect()
}

/// NumPy format 1.0/2.0: magic, version, header length, a Python dict literal, then the data.
fn read_npy(bytes: &[u8]) -> Result<Table, Error> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(Error::Input("not a NumPy .npy file (no \\x93NUMPY magic)".to_string()));
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(Error::Input(format!("unsupported .npy version {v}"))),
    };
    let header = std::str::from_utf8(bytes.get(start..start + header_len).ok_or_else(|| Error::Input("truncated header".into()))?).map_err(|_| Error::Input("header is not text".into()))?;
    let field = |key: &str| -> Result<&str, Error> {
        let at = header.find(&format!("'{key}'")).ok_or_else(|| Error::Input(format!("header has no '{key}'")))?;
        Ok(header[at + key.len() + 2..].trim_start().trim_start_matches(':').trim_start())
    };
    let descr = field("descr")?;
    let float = if descr.starts_with("'<f4'") {
        true
    } else if descr.starts_with("'<u4'") || descr.starts_with("'<i4'") {
        false
    } else {
        return Err(Error::Input(format!("dtype {} is not supported: use float32 ('<f4') or uint32 ('<u4')", descr.split(',').next().unwrap_or(descr))));
    };
    let _ = float; // both are read as bit patterns
    if !field("fortran_order")?.starts_with("False") {
        return Err(Error::Input("fortran_order arrays are not supported: save with np.ascontiguousarray".to_string()));
    }
    let shape_text = field("shape")?;
    let inside = shape_text.trim_start_matches('(').split(')').next().unwrap_or("");
    let dims: Vec<usize> = inside.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().map_err(|_| Error::Input(format!("bad shape ({inside})")))).collect::<Result<_, _>>()?;
    let (rows, cols) = match dims.as_slice() {
        [r, c] => (*r, *c),
        [r] => (*r, 1),
        _ => return Err(Error::Input(format!("shape ({inside}) is not 2-D: one row per beat, one column per lane"))),
    };
    let data = &bytes[start + header_len..];
    if data.len() < rows * cols * 4 {
        return Err(Error::Input(format!("shape ({rows}, {cols}) needs {} data bytes, the file has {}", rows * cols * 4, data.len())));
    }
    Ok((0..rows).map(|r| (0..cols).map(|c| u32::from_le_bytes(data[4 * (r * cols + c)..][..4].try_into().unwrap())).collect()).collect())
}

fn write_npy(table: &Table, columns: usize, float: bool) -> Vec<u8> {
    let descr = if float { "<f4" } else { "<u4" };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({}, {columns}), }}", table.len());
    // Magic (6) + version (2) + length (2) + header + newline, padded to a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    for row in table {
        for v in row {
            out.extend(v.to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_reads_decimals_and_bit_patterns_and_names_bad_cells() {
        let t = read_csv("1.5, 0x3f800000\n# comment\n-2,nan\n").unwrap();
        assert_eq!(t, vec![vec![1.5f32.to_bits(), 0x3F80_0000], vec![(-2f32).to_bits(), f32::NAN.to_bits()]]);
        assert_eq!(read_csv("1,2\n3,x7\n").unwrap_err().to_string(), "2:3: `x7` is not a number (a decimal, or a 0x bit pattern of at most 32 bits)");
    }

    #[test]
    fn npy_round_trips_and_refuses_other_shapes() {
        let t = vec![vec![1, 2, 3], vec![4, 5, 0xFFFF_FFFF]];
        assert_eq!(read_npy(&write_npy(&t, 3, false)).unwrap(), t);
        let mut bad = write_npy(&t, 3, false);
        let text = String::from_utf8_lossy(&bad[10..]).replace("(2, 3)", "(2,3,1)");
        bad.truncate(10);
        bad.extend(text.as_bytes());
        assert!(read_npy(&bad).unwrap_err().to_string().contains("not 2-D"));
    }
}
