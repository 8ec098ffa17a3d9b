//! Tetrahedral meshes from files: Gmsh's `.msh` (format 2.2, ASCII; 4-node tetrahedra, every
//! other element type skipped) and Gambit's neutral `.neu` (MIDG2's format: the `NODAL
//! COORDINATES` and `ELEMENTS/CELLS` sections, element type 6 with 4 nodes). Node numbers may be
//! any integers; a malformed line is an error naming the file's line.

use std::collections::HashMap;

use super::mesh::TetMesh;
use crate::Error;

fn bad(file: &str, line: usize, what: &str) -> Error {
    Error::Config(format!("{file}:{line}: {what}"))
}

/// Numbers of a line, or an error naming it.
fn numbers<T: std::str::FromStr>(file: &str, line: usize, text: &str) -> Result<Vec<T>, Error> {
    text.split_whitespace().map(|w| w.parse::<T>().map_err(|_| bad(file, line, &format!("`{w}` is not a number")))).collect()
}

/// Elements with vertices named by node id, to a mesh with vertices by position.
fn build(file: &str, nodes: Vec<(i64, [f64; 3])>, elements: Vec<(usize, [i64; 4])>) -> Result<TetMesh, Error> {
    let mut index = HashMap::new();
    for (k, (id, _)) in nodes.iter().enumerate() {
        if index.insert(*id, k as u32).is_some() {
            return Err(Error::Config(format!("{file}: node {id} is defined twice")));
        }
    }
    let elements = elements
        .into_iter()
        .map(|(line, ids)| {
            let mut e = [0u32; 4];
            for (c, id) in ids.iter().enumerate() {
                e[c] = *index.get(id).ok_or_else(|| bad(file, line, &format!("node {id} is not defined")))?;
            }
            Ok(e)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    if elements.is_empty() {
        return Err(Error::Config(format!("{file}: no tetrahedra")));
    }
    TetMesh::new(nodes.into_iter().map(|n| n.1).collect(), elements).map_err(|e| Error::Config(format!("{file}: {e}")))
}

/// A Gmsh `.msh` file (format 2.2, ASCII) named `file`, from its text.
pub fn gmsh(file: &str, text: &str) -> Result<TetMesh, Error> {
    let lines: Vec<&str> = text.lines().collect();
    let find = |tag: &str| lines.iter().position(|l| l.trim() == tag).ok_or_else(|| Error::Config(format!("{file}: no `{tag}` section")));
    let format = find("$MeshFormat")?;
    let version = lines.get(format + 1).and_then(|l| l.split_whitespace().next()).unwrap_or("");
    if !version.starts_with("2.") {
        return Err(bad(file, format + 2, &format!("format {version}: only 2.2 ASCII is read (write it with `gmsh -format msh2`)")));
    }
    if lines.get(format + 1).and_then(|l| l.split_whitespace().nth(1)) != Some("0") {
        return Err(bad(file, format + 2, "a binary file: only ASCII is read"));
    }
    let section = |tag: &str| -> Result<(usize, usize), Error> {
        let at = find(tag)?;
        let count = lines.get(at + 1).and_then(|l| l.trim().parse::<usize>().ok()).ok_or_else(|| bad(file, at + 2, "expected the count"))?;
        if at + 2 + count > lines.len() {
            return Err(bad(file, at + 2, &format!("{count} entries announced, the file ends first")));
        }
        Ok((at + 2, count))
    };
    let (first, count) = section("$Nodes")?;
    let mut nodes = Vec::with_capacity(count);
    for l in first..first + count {
        let v: Vec<f64> = numbers(file, l + 1, lines[l])?;
        if v.len() != 4 {
            return Err(bad(file, l + 1, "a node is `id x y z`"));
        }
        nodes.push((v[0] as i64, [v[1], v[2], v[3]]));
    }
    let (first, count) = section("$Elements")?;
    let mut elements = vec![];
    for l in first..first + count {
        let v: Vec<i64> = numbers(file, l + 1, lines[l])?;
        if v.len() < 3 {
            return Err(bad(file, l + 1, "an element is `id type tags… nodes…`"));
        }
        // Type 4: the 4-node tetrahedron.
        if v[1] == 4 {
            let at = 3 + v[2] as usize;
            if v.len() != at + 4 {
                return Err(bad(file, l + 1, "a tetrahedron has 4 nodes after its tags"));
            }
            elements.push((l + 1, [v[at], v[at + 1], v[at + 2], v[at + 3]]));
        }
    }
    build(file, nodes, elements)
}

/// A Gambit neutral file (`.neu`) named `file`, from its text.
pub fn gambit(file: &str, text: &str) -> Result<TetMesh, Error> {
    let lines: Vec<&str> = text.lines().collect();
    let head = lines.iter().position(|l| l.split_whitespace().next() == Some("NUMNP")).ok_or_else(|| Error::Config(format!("{file}: no `NUMNP NELEM …` line")))?;
    let counts: Vec<usize> = numbers(file, head + 2, lines.get(head + 1).copied().unwrap_or(""))?;
    let (numnp, nelem) = match counts.as_slice() {
        [a, b, ..] => (*a, *b),
        _ => return Err(bad(file, head + 2, "expected NUMNP and NELEM")),
    };
    let start = |title: &str| lines.iter().position(|l| l.trim_start().starts_with(title)).map(|p| p + 1).ok_or_else(|| Error::Config(format!("{file}: no `{title}` section")));
    let first = start("NODAL COORDINATES")?;
    let mut nodes = Vec::with_capacity(numnp);
    for l in first..first + numnp {
        let v: Vec<f64> = numbers(file, l + 1, lines.get(l).copied().unwrap_or(""))?;
        if v.len() != 4 {
            return Err(bad(file, l + 1, "a node is `id x y z`"));
        }
        nodes.push((v[0] as i64, [v[1], v[2], v[3]]));
    }
    let first = start("ELEMENTS/CELLS")?;
    let mut elements = Vec::with_capacity(nelem);
    for l in first..first + nelem {
        let v: Vec<i64> = numbers(file, l + 1, lines.get(l).copied().unwrap_or(""))?;
        // Element type 6 with 4 nodes: the tetrahedron.
        if v.len() != 7 || v[1] != 6 || v[2] != 4 {
            return Err(bad(file, l + 1, "only tetrahedra (`id 6 4 n1 n2 n3 n4`) are read"));
        }
        elements.push((l + 1, [v[3], v[4], v[5], v[6]]));
    }
    build(file, nodes, elements)
}
