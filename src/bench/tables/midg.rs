//! The MIDG2 tables (`bench/midg.json`).

use super::{f, int, load, rows, table, Sources};
use crate::Error;

pub(super) fn convergence(src: &Sources) -> Result<String, Error> {
    let j = load(&src.bench, "midg.json")?;
    let body = rows(&j["rows"])
        .iter()
        .map(|r| {
            let order = |v: &serde_json::Value| if v.is_null() { "–".to_string() } else { format!("{:.2}", f(v)) };
            vec![
                int(&r["order"]),
                format!("{}³", int(&r["cubes"])),
                int(&r["elements"]),
                int(&r["steps"]),
                format!("{:.3e}", f(&r["error_binary64"])),
                order(&r["order_binary64"]),
                format!("{:.3e}", f(&r["error_binary32"])),
                order(&r["order_binary32"]),
                format!("{:.1e}", f(&r["rounding"])),
            ]
        })
        .collect();
    Ok(table(
        &format!(
            "MIDG2's test case — the cavity mode Ey = sin(πx)·sin(πz)·cos(√2·π·t) in the perfectly conducting unit cube — run by the software model to t = {} with MIDG2's time step; the largest nodal error of any of the six fields against the exact solution, the observed order log2(e_coarse / e_fine) between successive meshes (expected N + 1), in binary64 and binary32, and the largest difference between the two runs at any node (what rounding to binary32 adds; where it nears the error, rounding takes over). `weft bench midg` (bench/midg.json).",
            f(&j["end_time"])
        ),
        &["N", "sub-cubes", "elements", "steps", "error (binary64)", "order", "error (binary32)", "order", "binary32 − binary64"],
        body,
    ))
}
