//! An application file bound to a mesh and run in OP2's sequential order: the declarations
//! become an [`App`], each loop's kernel a kernel-language kernel evaluated by its golden model
//! (the arithmetic the generated hardware performs), and the program's steps run in order.

use std::collections::BTreeMap;

use weft_hdl::pipeline::dsl::{self, DslError};

pub use super::element::Element;
use super::kernel::{compile, ArgShape, Lane, LoopKernel};
use super::products::{self, DenseBody, Operand};
use super::program::{App, Arg, DatId, GlobalId, SetId};
use super::schedule::Slot;
use super::text::{self, AppText, Init, Precision, Step, Word};
use crate::Error;

/// What a mesh provides, by name: set sizes, maps (dimension, entries) and data (dimension,
/// values), as a mesh file or generator gives them.
#[derive(Clone, Debug, Default)]
pub struct MeshData {
    /// Set sizes, in elements.
    pub sets: BTreeMap<String, usize>,
    /// Maps: dimension, and `dim` target elements per source element.
    pub maps: BTreeMap<String, (usize, Vec<u32>)>,
    /// Data: dimension, and `dim` values per element.
    pub dats: BTreeMap<String, (usize, Vec<f64>)>,
    /// Matrices: rows, columns and the values row-major.
    pub matrices: BTreeMap<String, (usize, usize, Vec<f64>)>,
}

/// What a loop does to each element: a kernel in the kernel language, or a dense loop's products.
pub(super) enum Body {
    Kernel(LoopKernel),
    Dense(DenseBody),
}

pub(super) struct CompiledLoop {
    pub(super) set: SetId,
    /// The internal arguments: a `via map` argument is one per entry of the map.
    pub(super) args: Vec<Arg>,
    pub(super) body: Body,
    /// The internal arguments' names (`name` in the file, `name_j` for entry j of a `via map`
    /// argument).
    pub(super) names: Vec<String>,
}

impl CompiledLoop {
    /// Argument `k`'s name in the file.
    pub(super) fn kernel_arg_name(&self, k: usize) -> &str {
        &self.names[k]
    }

    /// The loop's kernel; a dense loop (`name`) has none.
    pub(super) fn kernel(&self, name: &str) -> Result<&LoopKernel, Error> {
        match &self.body {
            Body::Kernel(k) => Ok(k),
            Body::Dense(_) => Err(Error::Config(format!("loop `{name}` is a dense loop: it has products, not a kernel"))),
        }
    }
}

/// An application bound to a mesh.
pub struct Application<T: Element> {
    /// The declarations and current values: sets, maps, data and globals.
    pub app: App<T>,
    origin: String,
    text: AppText,
    sets: BTreeMap<String, SetId>,
    dats: BTreeMap<String, DatId>,
    globals: BTreeMap<String, (GlobalId, usize)>,
    consts: BTreeMap<String, u64>,
    pub(super) loops: BTreeMap<String, CompiledLoop>,
}

/// Runs one loop step of a program in place of [`Application::run_loop`].
pub type LoopRunner<'a, T> = &'a mut dyn FnMut(&mut Application<T>, &str) -> Result<(), Error>;

/// How a program run visits its loops' elements and counts its outermost repeat.
struct Run<'a, T: Element> {
    schedules: Option<&'a BTreeMap<String, Vec<Slot>>>,
    iterations: Option<usize>,
    each_loop: Option<LoopRunner<'a, T>>,
}

/// `expression` in the kernel language over `names` (bit patterns), in `precision`.
fn evaluate(expression: &Word, names: &BTreeMap<String, u64>, precision: Precision) -> Result<u64, DslError> {
    let (rewritten, used) = super::kernel::rewrite(&expression.text);
    let used: Vec<&String> = used.iter().filter(|u| names.contains_key(*u)).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let mut lanes: Vec<String> = used.iter().map(|u| u.to_string()).collect();
    let mut values: Vec<u64> = used.iter().map(|u| names[*u]).collect();
    if lanes.is_empty() {
        lanes.push("no_input__".into());
        values.push(0);
    }
    const PREFIX: &str = "output value = ";
    let source = format!("kernel expression: {}\ninput {}\n{PREFIX}{rewritten}", precision.name(), lanes.join(", "));
    let kernel = dsl::parse(&source).map_err(|e| DslError { line: expression.at.line, column: expression.at.column + e.column.saturating_sub(PREFIX.len() + 1), message: e.message })?;
    Ok(kernel.evaluate_bits(&values)[0])
}

impl<T: Element> Application<T> {
    /// Parses `source` (from file `origin`) and binds it to `mesh`; the file's type must be
    /// `T`.
    pub fn load(origin: &str, source: &str, mesh: &MeshData) -> Result<Application<T>, Error> {
        Self::bind(origin, source, mesh, false)
    }

    /// [`Application::load`] in `T` whatever type the file declares (its constants are then
    /// computed in `T`).
    pub fn load_as(origin: &str, source: &str, mesh: &MeshData) -> Result<Application<T>, Error> {
        Self::bind(origin, source, mesh, true)
    }

    fn bind(origin: &str, source: &str, mesh: &MeshData, convert: bool) -> Result<Application<T>, Error> {
        let fail = |error: DslError| Error::Source { origin: origin.to_string(), error };
        let mut text = text::parse(source).map_err(fail)?;
        if convert {
            text.precision = T::PRECISION;
        }
        if text.precision != T::PRECISION {
            return Err(fail(DslError { line: 1, column: 1, message: format!("the application is {}, run as {}", text.precision.name(), T::PRECISION.name()) }));
        }
        let mut app = App::<T>::new();
        let mut sets = BTreeMap::new();
        for s in &text.sets {
            let size = *mesh.sets.get(&s.text).ok_or_else(|| fail(s.at.error(format!("the mesh has no set `{}` (it has {})", s.text, mesh.sets.keys().cloned().collect::<Vec<_>>().join(", ")))))?;
            sets.insert(s.text.clone(), app.set(&s.text, size));
        }
        let set = |w: &Word| sets.get(&w.text).copied().ok_or_else(|| fail(w.at.error(format!("`{}` is not a declared set", w.text))));
        let mut names: BTreeMap<String, u64> = BTreeMap::new();
        for c in &text.consts {
            let values: Vec<u64> = c.values.iter().map(|v| evaluate(v, &names, text.precision)).collect::<Result<_, _>>().map_err(fail)?;
            if values.len() == 1 {
                names.insert(c.name.text.clone(), values[0]);
            } else {
                names.extend(values.iter().enumerate().map(|(i, v)| (format!("{}__{i}", c.name.text), *v)));
            }
        }
        let consts = names.clone();
        let mut maps = BTreeMap::new();
        for m in &text.maps {
            let (dim, values) = mesh.maps.get(&m.name.text).ok_or_else(|| fail(m.name.at.error(format!("the mesh has no map `{}`", m.name.text))))?;
            if *dim != m.dim {
                return Err(fail(m.name.at.error(format!("map `{}` has dimension {} in the mesh, {} here", m.name.text, dim, m.dim))));
            }
            let id = app.map(&m.name.text, set(&m.from)?, set(&m.to)?, m.dim, values.clone()).map_err(|e| fail(m.name.at.error(e.to_string())))?;
            maps.insert(m.name.text.clone(), (id, m.dim));
        }
        let mut dats = BTreeMap::new();
        for d in &text.dats {
            let s = set(&d.set)?;
            let size = mesh.sets[&d.set.text];
            let values: Vec<T> = match &d.init {
                Init::Zero => vec![T::zero(); size * d.dim],
                Init::Mesh => {
                    let (dim, v) = mesh.dats.get(&d.name.text).ok_or_else(|| fail(d.name.at.error(format!("the mesh has no datum `{}`", d.name.text))))?;
                    if *dim != d.dim {
                        return Err(fail(d.name.at.error(format!("`{}` has dimension {dim} in the mesh, {} here", d.name.text, d.dim))));
                    }
                    v.iter().map(|x| T::from_f64(*x)).collect()
                }
                Init::Constant(c) => {
                    let element: Vec<T> = match consts.get(&c.text) {
                        Some(v) => vec![T::from_lane(*v); d.dim],
                        None => (0..d.dim)
                            .map(|i| consts.get(&format!("{}__{i}", c.text)).map(|v| T::from_lane(*v)))
                            .collect::<Option<_>>()
                            .ok_or_else(|| fail(c.at.error(format!("`{}` is not a constant of {} values", c.text, d.dim))))?,
                    };
                    element.iter().copied().cycle().take(size * d.dim).collect()
                }
            };
            dats.insert(d.name.text.clone(), app.dat(&d.name.text, s, d.dim, values).map_err(|e| fail(d.name.at.error(e.to_string())))?);
        }
        let mut matrices = BTreeMap::new();
        for m in &text.matrices {
            let (rows, cols, values) = mesh.matrices.get(&m.name.text).ok_or_else(|| fail(m.name.at.error(format!("the mesh has no matrix `{}`", m.name.text))))?;
            if (*rows, *cols) != (m.rows, m.cols) || values.len() != rows * cols {
                return Err(fail(m.name.at.error(format!("matrix `{}` is {rows} × {cols} in the mesh ({} values), {} × {} here", m.name.text, values.len(), m.rows, m.cols))));
            }
            matrices.insert(m.name.text.clone(), (m.clone(), values.iter().map(|x| T::from_f64(*x).to_lane()).collect::<Vec<u64>>()));
        }
        let mut globals = BTreeMap::new();
        for (g, dim) in &text.globals {
            globals.insert(g.text.clone(), (app.global(&g.text, vec![T::zero(); *dim]), *dim));
        }
        let mut loops = BTreeMap::new();
        for l in &text.loops {
            let mut args = vec![];
            let mut names = vec![];
            let mut operands = vec![];
            for a in &l.args {
                let dat_dim = || text.dats.iter().find(|x| x.name.text == a.target.text).map_or(0, |x| x.dim);
                let first = args.len();
                let (dim, entries) = match (&a.via, dats.get(&a.target.text), globals.get(&a.target.text)) {
                    (None, Some(d), _) => {
                        args.push(Arg::Direct(*d, a.access));
                        (dat_dim(), None)
                    }
                    (Some((m, index)), Some(d), _) => {
                        let (map, mdim) = maps.get(&m.text).ok_or_else(|| fail(m.at.error(format!("`{}` is not a declared map", m.text))))?;
                        match index {
                            Some(i) => args.push(Arg::Indirect(*d, *map, *i, a.access)),
                            None if l.dense.is_none() => {
                                return Err(fail(m.at.error(format!("`via {}` (every entry) is a dense loop's operand; a kernel reads one entry: `via {}[index]`", m.text, m.text))))
                            }
                            None => args.extend((0..*mdim).map(|j| Arg::Indirect(*d, *map, j, a.access))),
                        }
                        (dat_dim(), index.is_none().then_some(*mdim))
                    }
                    (None, None, Some((g, dim))) => {
                        args.push(Arg::Global(*g, a.access));
                        (*dim, None)
                    }
                    (Some(_), None, Some(_)) => return Err(fail(a.target.at.error(format!("`{}` is a global: it is not reached through a map", a.target.text)))),
                    _ => return Err(fail(a.target.at.error(format!("`{}` is neither a dat nor a global", a.target.text)))),
                };
                match entries {
                    Some(n) => names.extend((0..n).map(|j| format!("{}_{j}", a.name.text))),
                    None => names.push(a.name.text.clone()),
                }
                operands.push(Operand { name: &a.name.text, at: a.name.at, first, entries, dim, access: a.access });
            }
            let s = set(&l.set)?;
            // The loop's rules (map from the loop's set, dat on its target set, access of a global).
            app.increments(&l.name.text, s, &args).map_err(|e| fail(l.name.at.error(e.to_string())))?;
            let body = match l.dense {
                Some(_) => Body::Dense(products::compile(l, &operands, &matrices).map_err(fail)?),
                None => {
                    let shapes: Vec<ArgShape> = operands.iter().map(|o| ArgShape { name: o.name, dim: o.dim, access: o.access }).collect();
                    Body::Kernel(compile(l, &shapes, &consts, text.precision).map_err(fail)?)
                }
            };
            loops.insert(l.name.text.clone(), CompiledLoop { set: s, args, body, names });
        }
        Ok(Application { app, origin: origin.to_string(), text, sets, dats, globals, consts, loops })
    }

    /// The set declared as `name`.
    pub fn set_id(&self, name: &str) -> Option<SetId> {
        self.sets.get(name).copied()
    }

    /// Every loop, by name: the set it runs over and its arguments.
    pub fn loop_args(&self) -> Vec<(&str, SetId, &[Arg])> {
        self.loops.iter().map(|(name, l)| (name.as_str(), l.set, l.args.as_slice())).collect()
    }

    /// Runs loop `name` once over its set, in element order.
    pub fn run_loop(&mut self, name: &str) -> Result<(), Error> {
        let size = self.loops.get(name).map_or(0, |l| self.app.set_size(l.set));
        let order: Vec<Option<u32>> = (0..size as u32).map(Some).collect();
        self.run_loop_in(name, &order)
    }

    /// What loop `name` increments through maps, per element (the hazards a schedule keeps
    /// λ apart: [`crate::app::schedule`]).
    pub fn increments(&self, name: &str) -> Result<Vec<Vec<u32>>, Error> {
        let l = self.loops.get(name).ok_or_else(|| Error::Config(format!("{}: no loop `{name}`", self.origin)))?;
        self.app.increments(name, l.set, &l.args)
    }

    /// Runs loop `name` once, visiting its elements in `order` (a schedule's slots; no-ops
    /// skipped): the schedule-order reference of the hardware that issues it so.
    pub fn run_loop_in(&mut self, name: &str, order: &[Option<u32>]) -> Result<(), Error> {
        self.run_loop_order(name, order, true)
    }

    /// [`Application::run_loop_in`] over some of the loop's elements only: one node's share of a
    /// partitioned run ([`crate::app::partition::run`]).
    pub fn run_loop_part(&mut self, name: &str, order: &[Option<u32>]) -> Result<(), Error> {
        self.run_loop_order(name, order, false)
    }

    fn run_loop_order(&mut self, name: &str, order: &[Option<u32>], complete: bool) -> Result<(), Error> {
        let l = self.loops.get(name).ok_or_else(|| Error::Config(format!("{}: no loop `{name}`", self.origin)))?;
        let run = if complete { App::par_loop_in } else { App::par_loop_part };
        let kernel = match &l.body {
            Body::Kernel(k) => k,
            Body::Dense(body) => return run(&mut self.app, name, l.set, &l.args, order, &|bufs| body.evaluate(bufs)),
        };
        run(&mut self.app, name, l.set, &l.args, order, &|bufs| {
            let lanes: Vec<u64> = kernel
                .lanes
                .iter()
                .map(|lane| match *lane {
                    Lane::Arg(k, i) => bufs[k][i].to_lane(),
                    Lane::Const(bits) => bits,
                })
                .collect();
            for ((k, i), out) in kernel.outputs.iter().zip(kernel.kernel.evaluate_bits(&lanes)) {
                // An increment's buffer holds the kernel's increment (the kernel sets each
                // component once), added to its target as the hardware adds it.
                bufs[*k][*i] = T::from_lane(out);
            }
        })
    }

    /// The names an expression of the program may use: constants, set sizes and globals.
    fn names(&self) -> BTreeMap<String, u64> {
        let mut names = self.consts.clone();
        for (s, id) in &self.sets {
            names.insert(s.clone(), T::from_f64(self.app.set_size(*id) as f64).to_lane());
        }
        for (g, (id, dim)) in &self.globals {
            let v = self.app.global_values(*id);
            if *dim == 1 {
                names.insert(g.clone(), v[0].to_lane());
            } else {
                names.extend(v.iter().enumerate().map(|(i, x)| (format!("{g}__{i}"), x.to_lane())));
            }
        }
        names
    }

    /// Runs the program; `print` gets each `print` step's iteration (the outermost repeat's
    /// count, from 1) and value.
    pub fn run(&mut self, print: &mut dyn FnMut(usize, T)) -> Result<(), Error> {
        self.run_as(None, None, print)
    }

    /// [`Application::run`] with each loop visiting its elements in `schedules` (a compiled
    /// plan's; element order for loops it does not name) and the outermost repeat run
    /// `iterations` times instead of the file's count.
    pub fn run_as(&mut self, schedules: Option<&BTreeMap<String, Vec<Slot>>>, iterations: Option<usize>, print: &mut dyn FnMut(usize, T)) -> Result<(), Error> {
        let program = self.text.program.clone();
        self.steps(&program, 0, &mut Run { schedules, iterations, each_loop: None }, print)
    }

    /// [`Application::run`] with every loop step handed to `each_loop` (which may run it over
    /// parts of its set, as [`crate::app::partition::run`] does) and the outermost repeat run
    /// `iterations` times instead of the file's count.
    pub fn run_with(&mut self, iterations: Option<usize>, each_loop: LoopRunner<'_, T>, print: &mut dyn FnMut(usize, T)) -> Result<(), Error> {
        let program = self.text.program.clone();
        self.steps(&program, 0, &mut Run { schedules: None, iterations, each_loop: Some(each_loop) }, print)
    }

    fn steps(&mut self, steps: &[Step], iteration: usize, run: &mut Run<T>, print: &mut dyn FnMut(usize, T)) -> Result<(), Error> {
        let fail = |origin: &str, error: DslError| Error::Source { origin: origin.to_string(), error };
        for step in steps {
            match step {
                Step::Loop(name) => {
                    if !self.loops.contains_key(&name.text) {
                        return Err(fail(&self.origin, name.at.error(format!("`{}` is not a loop of this application", name.text))));
                    }
                    if let Some(each_loop) = run.each_loop.as_mut() {
                        each_loop(self, &name.text)?;
                        continue;
                    }
                    match run.schedules.and_then(|s| s.get(&name.text)) {
                        Some(order) => self.run_loop_in(&name.text, order)?,
                        None => self.run_loop(&name.text)?,
                    }
                }
                Step::Assign(global, expression) => {
                    let &(id, dim) = self.globals.get(&global.text).ok_or_else(|| fail(&self.origin, global.at.error(format!("`{}` is not a global", global.text))))?;
                    let v = evaluate(expression, &self.names(), self.text.precision).map_err(|e| fail(&self.origin, e))?;
                    self.app.set_global(id, &vec![T::from_lane(v); dim]);
                }
                Step::Repeat(count, inner) => {
                    let count = if iteration == 0 { run.iterations.unwrap_or(*count) } else { *count };
                    for i in 1..=count {
                        self.steps(inner, if iteration == 0 { i } else { iteration }, run, print)?;
                    }
                }
                Step::Print(every, expression) => {
                    if iteration.is_multiple_of(*every) {
                        let v = evaluate(expression, &self.names(), self.text.precision).map_err(|e| fail(&self.origin, e))?;
                        print(iteration, T::from_lane(v));
                    }
                }
            }
        }
        Ok(())
    }

    /// The program's steps.
    pub(super) fn program(&self) -> &[Step] {
        &self.text.program
    }

    /// Every global's name, id and dimension, by name.
    pub(super) fn global_ids(&self) -> Vec<(String, GlobalId, usize)> {
        self.globals.iter().map(|(n, (g, d))| (n.clone(), *g, *d)).collect()
    }

    /// `expression` of the program at `at` computed once, from constants and set sizes only
    /// (what a compiled program can take as a constant); an error names a global it uses.
    pub(super) fn constant(&self, expression: &Word) -> Result<u64, Error> {
        let fail = |error: DslError| Error::Source { origin: self.origin.clone(), error };
        if let Some(g) = self.globals.keys().find(|g| super::kernel::rewrite(&expression.text).1.iter().any(|u| u == *g || u.starts_with(&format!("{g}__")))) {
            return Err(fail(expression.at.error(format!("the compiled program takes constant assignments only; this one reads global `{g}`"))));
        }
        let mut names = self.consts.clone();
        for (s, id) in &self.sets {
            names.insert(s.clone(), T::from_f64(self.app.set_size(*id) as f64).to_lane());
        }
        evaluate(expression, &names, self.text.precision).map_err(fail)
    }

    /// What `print` step number `step` (in program order, from 0) prints with the globals at
    /// `values` (by name, as a compiled program logged them).
    pub fn print_value(&self, step: usize, values: &BTreeMap<String, Vec<T>>) -> Result<T, Error> {
        fn prints<'s>(steps: &'s [Step], out: &mut Vec<&'s Word>) {
            for s in steps {
                match s {
                    Step::Print(_, e) => out.push(e),
                    Step::Repeat(_, inner) => prints(inner, out),
                    _ => {}
                }
            }
        }
        let mut all = vec![];
        prints(&self.text.program, &mut all);
        let expression = all.get(step).ok_or_else(|| Error::Config(format!("{}: the program has {} print steps, not {}", self.origin, all.len(), step + 1)))?;
        let mut names = self.names();
        for (g, v) in values {
            if v.len() == 1 {
                names.insert(g.clone(), v[0].to_lane());
            } else {
                names.extend(v.iter().enumerate().map(|(i, x)| (format!("{g}__{i}"), x.to_lane())));
            }
        }
        let v = evaluate(expression, &names, self.text.precision).map_err(|error| Error::Source { origin: self.origin.clone(), error })?;
        Ok(T::from_lane(v))
    }

    /// The file the application was read from, as given.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The name of global `g`.
    pub fn global_name(&self, g: GlobalId) -> &str {
        self.globals.iter().find(|(_, (id, _))| *id == g).map_or("", |(n, _)| n.as_str())
    }

    /// Dat `name`'s id in [`Application::app`].
    pub fn dat_id(&self, name: &str) -> Option<DatId> {
        self.dats.get(name).copied()
    }

    /// The values of dat `name`.
    pub fn dat(&self, name: &str) -> Option<&[T]> {
        self.dats.get(name).map(|d| self.app.values(*d))
    }

    /// Replaces the values of dat `name`.
    pub fn set_dat(&mut self, name: &str, values: &[T]) -> Result<(), Error> {
        let d = *self.dats.get(name).ok_or_else(|| Error::Config(format!("{}: no dat `{name}`", self.origin)))?;
        self.app.set_values(d, values)
    }

    /// Sets global `name`.
    pub fn set_global(&mut self, name: &str, values: &[T]) -> Result<(), Error> {
        let (g, dim) = self.globals.get(name).ok_or_else(|| Error::Config(format!("{}: no global `{name}`", self.origin)))?;
        if values.len() != *dim {
            return Err(Error::Config(format!("{}: global `{name}` has {dim} values, given {}", self.origin, values.len())));
        }
        self.app.set_global(*g, values);
        Ok(())
    }

    /// The values of global `name`.
    pub fn global(&self, name: &str) -> Option<&[T]> {
        self.globals.get(name).map(|(g, _)| self.app.global_values(*g))
    }
}
