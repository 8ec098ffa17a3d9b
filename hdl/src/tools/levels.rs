//! LUT levels: the longest register-to-register (or port) path of a Xilinx-mapped netlist,
//! counting LUT1..LUT6 as one level each and MUXF7/MUXF8 and CARRY4 as none (they sit in the
//! slice beside the LUTs), read from Yosys's JSON netlist. Registers, RAMs, DSPs and ports start
//! and end paths. This is the measure the timing work compares against reference designs.

use std::collections::HashMap;

/// Weight of a combinational cell type, or `None` for a cell that starts and ends paths.
fn weight(cell_type: &str) -> Option<u64> {
    if cell_type.starts_with("LUT") {
        Some(1)
    } else if cell_type.starts_with("MUXF") || cell_type.starts_with("CARRY") {
        Some(0)
    } else {
        None
    }
}

/// The LUT levels of module `top` in a Yosys `write_json` netlist.
pub fn lut_levels(json: &str, top: &str) -> Result<u64, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("yosys JSON: {e}"))?;
    let cells = v["modules"][top]["cells"].as_object().ok_or_else(|| format!("no module {top} in the Yosys JSON"))?;
    // Per combinational cell: its weight, input bits and output bits; per bit: the cell driving it.
    let mut comb: Vec<(u64, Vec<u64>)> = vec![];
    let mut driver: HashMap<u64, usize> = HashMap::new();
    for cell in cells.values() {
        let Some(w) = weight(cell["type"].as_str().unwrap_or("")) else { continue };
        let dirs = cell["port_directions"].as_object().ok_or("cell without port directions")?;
        let conns = cell["connections"].as_object().ok_or("cell without connections")?;
        let bits = |output: bool| -> Vec<u64> {
            conns
                .iter()
                .filter(|(port, _)| (dirs.get(*port).and_then(|d| d.as_str()) == Some("output")) == output)
                .flat_map(|(_, bits)| bits.as_array().into_iter().flatten().filter_map(|b| b.as_u64()))
                .collect()
        };
        let index = comb.len();
        for b in bits(true) {
            driver.insert(b, index);
        }
        comb.push((w, bits(false)));
    }
    // Longest path into each combinational cell's outputs, by depth-first search with memo.
    let mut level: Vec<Option<u64>> = vec![None; comb.len()];
    let mut deepest = 0;
    for root in 0..comb.len() {
        let mut stack = vec![(root, false)];
        while let Some((c, expanded)) = stack.pop() {
            if level[c].is_some() {
                continue;
            }
            let inputs: Vec<usize> = comb[c].1.iter().filter_map(|b| driver.get(b).copied()).collect();
            if expanded {
                let before = inputs.iter().map(|i| level[*i].unwrap_or(0)).max().unwrap_or(0);
                level[c] = Some(before + comb[c].0);
                deepest = deepest.max(before + comb[c].0);
            } else {
                stack.push((c, true));
                stack.extend(inputs.into_iter().filter(|i| level[*i].is_none()).map(|i| (i, false)));
            }
        }
    }
    Ok(deepest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(t: &str, ins: &[u64], outs: &[u64]) -> String {
        let mut conns = vec![];
        let mut dirs = vec![];
        for (k, b) in ins.iter().enumerate() {
            conns.push(format!("\"I{k}\": [{b}]"));
            dirs.push(format!("\"I{k}\": \"input\""));
        }
        for (k, b) in outs.iter().enumerate() {
            conns.push(format!("\"O{k}\": [{b}]"));
            dirs.push(format!("\"O{k}\": \"output\""));
        }
        format!("{{\"type\": \"{t}\", \"port_directions\": {{{}}}, \"connections\": {{{}}}}}", dirs.join(","), conns.join(","))
    }

    #[test]
    fn luts_count_one_level_carries_and_wide_muxes_none_and_registers_cut() {
        // ff(2) -> LUT6 -> CARRY4 -> LUT3 -> MUXF7 -> LUT2 -> ff ; and a side path LUT1 -> LUT1.
        let cells = [
            cell("FDRE", &[1], &[2]),
            cell("LUT6", &[2], &[3]),
            cell("CARRY4", &[3], &[4]),
            cell("LUT3", &[4], &[5]),
            cell("MUXF7", &[5], &[6]),
            cell("LUT2", &[6], &[7]),
            cell("FDRE", &[7], &[8]),
            cell("LUT1", &[8], &[9]),
            cell("LUT1", &[9], &[1]),
        ];
        let body: Vec<String> = cells.iter().enumerate().map(|(i, c)| format!("\"c{i}\": {c}")).collect();
        let json = format!("{{\"modules\": {{\"top\": {{\"cells\": {{{}}}}}}}}}", body.join(","));
        assert_eq!(lut_levels(&json, "top").unwrap(), 3);
    }
}
