//! LUT levels: the longest register-to-register (or port) path of a Xilinx-mapped netlist,
//! counting LUT1..LUT6 as one level each and MUXF7/MUXF8 and CARRY4 as none (they sit in the
//! slice beside the LUTs), read from Yosys's JSON netlist. Registers, RAMs, DSPs and ports start
//! and end paths. This is the measure the timing work compares against reference designs. On
//! Intel ALMs an ALUT counts one level and an arithmetic ALUT (LUT and carry in one cell) none,
//! like a CARRY4.

use crate::ToolError;
use std::collections::HashMap;

/// Weight of a combinational cell type, or `None` for a cell that starts and ends paths.
fn weight(cell_type: &str) -> Option<u64> {
    if cell_type.starts_with("LUT") || cell_type.starts_with("MISTRAL_ALUT") && cell_type != "MISTRAL_ALUT_ARITH" {
        Some(1)
    } else if cell_type.starts_with("MUXF") || cell_type.starts_with("CARRY") || cell_type == "MISTRAL_ALUT_ARITH" || cell_type == "MISTRAL_NOT" {
        Some(0)
    } else {
        None
    }
}

/// The LUT levels of module `top` in a Yosys `write_json` netlist.
pub fn lut_levels(json: &str, top: &str) -> Result<u64, ToolError> {
    levels_of(json, top).map_err(crate::unreadable("the Yosys JSON netlist"))
}

fn levels_of(json: &str, top: &str) -> Result<u64, String> {
    Ok(deepest_path(json, top)?.0)
}

/// The LUT levels of module `top` and the nets along its deepest path, first to last: the
/// output of each LUT (and carry or wide mux) on it, by the design's own names where the net
/// kept one (Yosys's `$`-names otherwise). This is what to read to decide where a register goes.
pub fn deepest_path(json: &str, top: &str) -> Result<(u64, Vec<String>), ToolError> {
    deepest(json, top).map_err(crate::unreadable("the Yosys JSON netlist"))
}

fn deepest(json: &str, top: &str) -> Result<(u64, Vec<String>), String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("yosys JSON: {e}"))?;
    let module = &v["modules"][top];
    let cells = module["cells"].as_object().ok_or_else(|| format!("no module {top} in the Yosys JSON"))?;
    // Per combinational cell: its weight, input bits and first output bit; per bit: the cell driving it.
    let mut comb: Vec<(u64, Vec<u64>, u64)> = vec![];
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
        let outs = bits(true);
        for &b in &outs {
            driver.insert(b, index);
        }
        comb.push((w, bits(false), outs.first().copied().unwrap_or(0)));
    }
    // Longest path into each combinational cell's outputs (and the input it came through), by
    // depth-first search with memo.
    let mut level: Vec<Option<(u64, Option<usize>)>> = vec![None; comb.len()];
    let mut deepest: (u64, Option<usize>) = (0, None);
    for root in 0..comb.len() {
        let mut stack = vec![(root, false)];
        while let Some((c, expanded)) = stack.pop() {
            if level[c].is_some() {
                continue;
            }
            let inputs: Vec<usize> = comb[c].1.iter().filter_map(|b| driver.get(b).copied()).collect();
            if expanded {
                let before = inputs.iter().map(|&i| (level[i].map_or(0, |l| l.0), Some(i))).max_by_key(|l| l.0).unwrap_or((0, None));
                let here = before.0 + comb[c].0;
                level[c] = Some((here, before.1));
                if here > deepest.0 {
                    deepest = (here, Some(c));
                }
            } else {
                stack.push((c, true));
                stack.extend(inputs.into_iter().filter(|i| level[*i].is_none()).map(|i| (i, false)));
            }
        }
    }
    // Name each bit after the shortest visible net holding it.
    let mut names: HashMap<u64, String> = HashMap::new();
    if let Some(nets) = module["netnames"].as_object() {
        for (name, net) in nets {
            let hidden = net["hide_name"].as_u64() == Some(1);
            for (k, b) in net["bits"].as_array().into_iter().flatten().enumerate() {
                let Some(b) = b.as_u64() else { continue };
                let label = if net["bits"].as_array().map_or(1, Vec::len) > 1 { format!("{name}[{k}]") } else { name.clone() };
                let better = match names.get(&b) {
                    None => true,
                    Some(old) => (old.starts_with('$') && !hidden) || (old.starts_with('$') == hidden && label.len() < old.len()),
                };
                if better {
                    names.insert(b, label);
                }
            }
        }
    }
    let name = |b: u64| names.get(&b).cloned().unwrap_or_else(|| format!("bit {b}"));
    let mut chain = vec![];
    let mut at = deepest.1;
    while let Some(c) = at {
        chain.push(c);
        at = level[c].and_then(|l| l.1);
    }
    chain.reverse();
    // Where the path starts (a register, RAM or port bit feeding its first cell) and which
    // register, RAM or port it ends at; in between, the nets that kept a design name.
    let mut path = vec![];
    if let Some(&first) = chain.first() {
        let from = comb[first].1.iter().filter(|b| !driver.contains_key(b)).map(|&b| name(b)).min_by_key(|n| (n.starts_with('$'), n.len()));
        path.extend(from);
    }
    path.extend(chain.iter().map(|&c| name(comb[c].2)).filter(|n| !n.starts_with('$')));
    if let Some(&last) = chain.last() {
        let end = comb[last].2;
        let sink = cells.values().find(|cell| {
            weight(cell["type"].as_str().unwrap_or("")).is_none()
                && cell["connections"]
                    .as_object()
                    .is_some_and(|conns| conns.iter().any(|(port, bits)| cell["port_directions"][port] == "input" && bits.as_array().is_some_and(|bits| bits.iter().any(|b| b.as_u64() == Some(end)))))
        });
        let sink_out = sink.and_then(|cell| {
            let conns = cell["connections"].as_object()?;
            conns.iter().find(|(port, _)| cell["port_directions"][port.as_str()] == "output").and_then(|(_, bits)| bits[0].as_u64())
        });
        path.push(match sink_out {
            Some(q) => name(q),
            None => name(end),
        });
    }
    path.dedup();
    Ok((deepest.0, path))
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
        let nets = r#""netnames": {"a_q": {"hide_name": 0, "bits": [2]}, "$abc$5": {"hide_name": 1, "bits": [5]},
            "sum": {"hide_name": 0, "bits": [4, 6]}, "b_q": {"hide_name": 0, "bits": [8]}}"#;
        let json = format!("{{\"modules\": {{\"top\": {{{nets}, \"cells\": {{{}}}}}}}}}", body.join(","));
        assert_eq!(lut_levels(&json, "top").unwrap(), 3);
        let (_, path) = deepest_path(&json, "top").unwrap();
        // Starts at the register output a_q, names what survived (sum), hides $-names, ends at b_q.
        assert_eq!(path, ["a_q", "bit 3", "sum[0]", "sum[1]", "bit 7", "b_q"]);
    }
}
