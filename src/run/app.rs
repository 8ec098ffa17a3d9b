//! `weft app`: an application file run on a mesh in OP2's sequential order, printing what its
//! program prints.

use std::path::{Path, PathBuf};

use weft_hdl::float::FloatFormat;
use weft_hdl::pipeline::Stages;
use weft_ip::app::hardware::{compile_loop_with, loop_spec, loop_verilog};
use weft_ip::app::sequencer::{compile_program_with, program_verilog};

use weft_ip::airfoil::{mesh::read_op2, naca0012::naca0012};
use weft_ip::app::{graph::graph, Application, Element, MeshData};

use crate::Error;

/// The mesh `spec` names: `naca0012:I,J` (OP2's NACA0012 C-grid, 3·I·J cells),
/// `graph:N,CHORDS,SEED` (a ring of N nodes with CHORDS random chords), or the path of an OP2
/// `new_grid.dat`.
pub fn mesh(spec: &str) -> Result<MeshData, Error> {
    let numbers = |what: &str, rest: &str, count: usize| -> Result<Vec<usize>, Error> {
        let v: Vec<usize> = rest
            .split(',')
            .map(|x| x.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| Error::Input(format!("--mesh {what}:{rest}: expected {count} whole numbers separated by commas")))?;
        if v.len() != count {
            return Err(Error::Input(format!("--mesh {what}:{rest}: expected {count} numbers, found {}", v.len())));
        }
        Ok(v)
    };
    if let Some(rest) = spec.strip_prefix("naca0012:") {
        let v = numbers("naca0012", rest, 2)?;
        return Ok(naca0012(v[0], v[1])?.data());
    }
    if let Some(rest) = spec.strip_prefix("graph:") {
        let v = numbers("graph", rest, 3)?;
        if v[0] < 2 {
            return Err(Error::Input(format!("--mesh graph:{rest}: at least 2 nodes")));
        }
        return Ok(graph(v[0], v[1], v[2] as u64));
    }
    let text = std::fs::read_to_string(spec).map_err(|e| Error::from(e).context(format!("--mesh {spec} (naca0012:I,J, graph:N,CHORDS,SEED or an OP2 new_grid.dat)")))?;
    Ok(read_op2(&text).map_err(|e| e.context(spec))?.data())
}

fn run_in<T: Element + std::fmt::LowerExp>(file: &Path, source: &str, mesh: &MeshData, convert: bool, out: &mut dyn FnMut(String)) -> Result<(), Error> {
    let origin = file.display().to_string();
    let mut app = if convert { Application::<T>::load_as(&origin, source, mesh)? } else { Application::<T>::load(&origin, source, mesh)? };
    app.run(&mut |i, v| out(format!("{i:6}  {v:.12e}")))?;
    Ok(())
}

/// `file`'s text and the precision to use: `precision` (`f64` or `f32`), or the file's own.
fn source_in(file: &Path, precision: Option<&str>) -> Result<(String, bool), Error> {
    let source = std::fs::read_to_string(file).map_err(|e| Error::from(e).context(file.display()))?;
    let declared = weft_ip::app::text::parse(&source).map_err(|error| weft_ip::Error::Source { origin: file.display().to_string(), error })?.precision;
    match precision.unwrap_or(declared.name()) {
        "f64" => Ok((source, true)),
        "f32" => Ok((source, false)),
        other => Err(Error::Input(format!("--precision {other}: allowed f64 or f32"))),
    }
}

/// Runs `file` on `mesh` in `precision` (`f64`, `f32`, or the file's own when `None`); each
/// printed value goes to `out` as `iteration  value`.
pub fn run(file: &Path, mesh: &MeshData, precision: Option<&str>, out: &mut dyn FnMut(String)) -> Result<(), Error> {
    match source_in(file, precision)? {
        (source, true) => run_in::<f64>(file, &source, mesh, true, out),
        (source, false) => run_in::<f32>(file, &source, mesh, true, out),
    }
}

fn compile_in<T: Element>(file: &Path, source: &str, mesh: &MeshData, name: &str, pipelines: usize, format: FloatFormat, out: &Path) -> Result<PathBuf, Error> {
    let app = Application::<T>::load_as(&file.display().to_string(), source, mesh)?;
    let stages = Stages::balanced(format);
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let (module, text) = if name.is_empty() {
        let compiled = compile_program_with(&app, &stages, pipelines)?;
        let text = program_verilog(&app, &stem, &compiled)?;
        (stem.to_string(), text)
    } else {
        let module = format!("{stem}_{name}");
        let compiled = compile_loop_with(&app, name, &stages, pipelines)?;
        let text = loop_verilog(&compiled, &loop_spec(&app, name, &module, &compiled))?;
        (module, text)
    };
    std::fs::create_dir_all(out).map_err(|e| Error::from(e).context(out.display()))?;
    let path = out.join(format!("{module}.v"));
    std::fs::write(&path, text).map_err(|e| Error::from(e).context(path.display()))?;
    Ok(path)
}

/// Compiles loop `name` of `file` for `mesh` to hardware (the precision as in [`run`]) and
/// writes its Verilog to `<out>/<file stem>_<name>.v` — or, when `name` is empty, the whole
/// program to `<out>/<file stem>.v` —, each loop with `pipelines` pipelines; returns the path.
pub fn compile(file: &Path, mesh: &MeshData, precision: Option<&str>, name: &str, pipelines: usize, out: &Path) -> Result<PathBuf, Error> {
    match source_in(file, precision)? {
        (source, true) => compile_in::<f64>(file, &source, mesh, name, pipelines, FloatFormat::BINARY64, out),
        (source, false) => compile_in::<f32>(file, &source, mesh, name, pipelines, FloatFormat::BINARY32, out),
    }
}

/// `weft app`: runs `file` on the mesh `mesh` names, printing what it prints, or with `compile`
/// writes the program's (`Some("")`) or a loop's Verilog and says where.
pub fn command(file: &Path, mesh: &str, precision: Option<&str>, compile: Option<&str>, pipelines: usize, out: &Path) -> Result<(), Error> {
    let data = self::mesh(mesh)?;
    match compile {
        None => run(file, &data, precision, &mut |line| println!("{line}")),
        Some(name) => self::compile(file, &data, precision, name, pipelines, out).map(|path| println!("wrote {}", path.display())),
    }
}
