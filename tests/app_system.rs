//! A system description that names a mesh application (`[application]`): `weft generate`
//! writes, per node, the application module, the node joined with it and the load image; the
//! joined top of node 0 (with the node and its module) passes Verilator's lint with -Wall; the
//! load image writes every element of the node's share once per dat; bad sections are refused
//! by name. The behaviour of the same modules is checked in `--test mesh_app_torus` (no host
//! after the load, bit-exact to the partitioned reference on both tori and the 520N ring).

use std::collections::BTreeMap;
use std::path::Path;

use weft::ip::airfoil::naca0012::naca0012;
use weft::ip::app::partition::halo::Halo;
use weft::ip::app::partition::local::local;
use weft::ip::app::partition::{partition, Method};
use weft::ip::app::Application;
use weft::tools::verilator_lint_files;

#[test]
fn the_airfoil_system_is_generated_and_its_tops_lint() {
    let out = std::env::temp_dir().join(format!("weft-test-app-system-{}", std::process::id()));
    let config = weft::system::load(Path::new("examples/apps/airfoil_4x2x1.toml")).unwrap();
    let written = weft::system::generate(&config, &out, &out.join("constraints")).unwrap();
    let dir = out.join("system").join("airfoil_4x2x1_airfoil");
    for q in 0..8 {
        for suffix in [".v", "_top.v", "_load.json"] {
            let file = dir.join(format!("airfoil_4x2x1_airfoil{q}{suffix}"));
            assert!(written.contains(&file), "{} not written", file.display());
        }
    }
    let top = dir.join("airfoil_4x2x1_airfoil0_top.v");
    let text = std::fs::read_to_string(&top).unwrap();
    // Ports 2 and 0 are wired inside: the top has the application's loader ports instead.
    let declared = |port: &str| text.lines().any(|l| l.trim_start().starts_with("input wire") && l.trim_end().ends_with(&format!(" {port};")));
    assert!(!declared("s_axis_p2_tdata") && !declared("s_axis_p0_tdata"), "ports 2 and 0 are inside the top");
    assert!(["app_start", "app_p_q_wr_data", "app_halo_packets_wr_data", "s_axil_awaddr", "xp_rx_serial"].iter().all(|p| declared(p)), "the loader ports beside the node's register window and links");
    let node = out.join("system").join("airfoil_4x2x1_node.v");
    verilator_lint_files(&[&node, &dir.join("airfoil_4x2x1_airfoil0.v"), &top], "airfoil_4x2x1_airfoil0_top").unwrap();

    // Node 3's load image: every dat gets one write per element the node holds.
    let mesh = naca0012(16, 20).unwrap().data();
    let app = Application::<f64>::load("airfoil.app", include_str!("../examples/apps/airfoil.app"), &mesh).unwrap();
    let loops = app.loop_args();
    let p = partition(&app.app, &loops, app.set_id("cells").unwrap(), 8, Method::Metis).unwrap();
    let h = Halo::build(&app.app, &loops, &p);
    drop(loops);
    let share = local(&app, &mesh, &p, &h, 3).unwrap();
    let image: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("airfoil_4x2x1_airfoil3_load.json")).unwrap()).unwrap();
    let mut writes: BTreeMap<String, usize> = BTreeMap::new();
    for w in image["writes"].as_array().unwrap() {
        *writes.entry(w[0].as_str().unwrap().to_string()).or_default() += 1;
    }
    for dat in ["p_x", "p_q", "p_qold", "p_adt", "p_res", "p_bound"] {
        let (_, set, _) = app.app.dat_info(app.dat_id(dat).unwrap());
        assert_eq!(writes.get(dat).copied(), Some(share.globals[set.index()].len()), "{dat}: one write per element of node 3's share");
    }
    let registers: Vec<&str> = image["registers"].as_array().unwrap().iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(registers, ["allreduce_flags", "allreduce_dst_a", "allreduce_dst_b", "allreduce_op", "allreduce_small_bytes"]);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_application_sections_are_refused_by_name() {
    for name in ["airfoil_4x2x1", "airfoil_2x2x2", "airfoil_ring_520n"] {
        let config = weft::system::load(Path::new(&format!("examples/apps/{name}.toml"))).unwrap();
        let app = config.application.unwrap_or_else(|| panic!("{name} names no application"));
        assert_eq!((app.file, app.mesh.as_str(), app.split.as_str()), (Path::new("examples/apps/airfoil.app").to_path_buf(), "naca0012:16,20", "metis"), "{name}");
    }
    let text = std::fs::read_to_string("examples/apps/airfoil_4x2x1.toml").unwrap();
    let refused = |from: &str, to: &str, want: &[&str]| {
        let changed = text.replacen(from, to, 1);
        assert_ne!(changed, text, "`{from}` is in the example");
        let err = weft::system::SystemConfig::parse_in(&changed, &[], Path::new("examples/apps")).err().unwrap_or_else(|| panic!("`{to}` was accepted")).to_string();
        for w in want {
            assert!(err.contains(w), "`{to}`: {err}");
        }
    };
    refused("local_ports = 3", "local_ports = 2", &["node.local_ports", "2"]);
    refused("[allreduce]\nports = [0, 1]\ntype = \"f64\"\n", "", &["[application]", "[allreduce]"]);
    refused("ports = [0, 1]", "ports = [0, 2]", &["allreduce.ports", "port 2"]);
    refused("split = \"metis\"", "split = \"random\"", &["application.split", "metis"]);
    refused("mesh = ", "meshes = ", &["meshes"]);
    // The engine's element type must be the application's: found when the application is read.
    let f32 = text.replacen("type = \"f64\"", "type = \"f32\"", 1);
    let config = weft::system::SystemConfig::parse_in(&f32, &[], Path::new("examples/apps")).unwrap();
    let out = std::env::temp_dir().join(format!("weft-test-app-system-f32-{}", std::process::id()));
    let err = weft::system::generate(&config, &out, &out.join("constraints")).expect_err("refused").to_string();
    let _ = std::fs::remove_dir_all(&out);
    assert!(err.contains("allreduce.type") && err.contains("f64"), "{err}");
}
