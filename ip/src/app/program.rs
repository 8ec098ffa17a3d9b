//! The declarations of a mesh application and the sequential execution of its loops.

use num_traits::Float;

use crate::Error;

/// A set of an [`App`] (OP2's `op_set`): a number of elements a loop runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetId(usize);

impl SetId {
    /// Its position among the application's sets (from 0, in declaration order).
    pub fn index(self) -> usize {
        self.0
    }
}
/// A map of an [`App`] (OP2's `op_map`): a fixed number of elements of one set per element of
/// another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapId(usize);
/// A dat of an [`App`] (OP2's `op_dat`): a fixed number of values per element of a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatId(usize);
/// A global of an [`App`] (OP2's `op_arg_gbl`): values a loop reads or reduces into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalId(usize);

/// How a loop uses an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reads the values; the kernel's changes are dropped.
    Read,
    /// The kernel's buffer replaces the values.
    Write,
    /// Reads the values, and the kernel's buffer replaces them.
    Rw,
    /// Adds the kernel's increment (its buffer starts at zero).
    Inc,
    /// Globals only: the smallest value any element gives (IEEE 754-2019 minimumNumber: NaNs
    /// ignored, −0 below +0).
    Min,
    /// Globals only: the largest value any element gives (maximumNumber, as for `Min`).
    Max,
}

impl Access {
    /// Whether the loop changes the values (`Write`, `Rw`, `Inc`, and the reductions).
    pub fn writes(self) -> bool {
        self != Access::Read
    }

    /// Whether the loop needs the values as they are (`Read`, `Rw`; `Inc` adds to them, so the
    /// element's owner must hold them, but the increment alone needs no copy).
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::Rw)
    }
}

/// A loop argument: a datum on the loop's set, a datum reached through index `index` of a map
/// from the loop's set, or a global.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// A dat on the loop's set, at the element itself.
    Direct(DatId, Access),
    /// A dat reached through entry `index` (from 0, below the map's dimension) of a map from
    /// the loop's set.
    Indirect(DatId, MapId, usize, Access),
    /// A global: read, or reduced with `Inc`, `Min` or `Max`.
    Global(GlobalId, Access),
}

impl Arg {
    /// How the loop uses the argument.
    pub fn access(&self) -> Access {
        match *self {
            Arg::Direct(_, a) | Arg::Indirect(_, _, _, a) | Arg::Global(_, a) => a,
        }
    }
}

struct Set {
    name: String,
    size: usize,
}

struct Map {
    name: String,
    from: SetId,
    to: SetId,
    dim: usize,
    values: Vec<u32>,
}

struct Dat<T> {
    name: String,
    set: SetId,
    dim: usize,
    values: Vec<T>,
}

struct Global<T> {
    name: String,
    values: Vec<T>,
}

/// A mesh application: its sets, maps, data and globals, with values of type `T` (binary64 or
/// binary32: every reduction and increment is done in `T`).
pub struct App<T = f64> {
    sets: Vec<Set>,
    maps: Vec<Map>,
    dats: Vec<Dat<T>>,
    globals: Vec<Global<T>>,
    interleave: Option<usize>,
    pipelines: usize,
}

impl<T> Default for App<T> {
    fn default() -> App<T> {
        App { sets: vec![], maps: vec![], dats: vec![], globals: vec![], interleave: None, pipelines: 1 }
    }
}

impl<T: Float> App<T> {
    /// An application with no sets, maps, data or globals.
    pub fn new() -> App<T> {
        App::default()
    }

    /// A set of `size` elements.
    pub fn set(&mut self, name: &str, size: usize) -> SetId {
        self.sets.push(Set { name: name.into(), size });
        SetId(self.sets.len() - 1)
    }

    /// A map of `dim` entries per element of `from`, each an element of `to`.
    pub fn map(&mut self, name: &str, from: SetId, to: SetId, dim: usize, values: Vec<u32>) -> Result<MapId, Error> {
        let (f, t) = (&self.sets[from.0], &self.sets[to.0]);
        if values.len() != f.size * dim {
            return Err(Error::Config(format!("map `{name}`: {} values for {} elements of `{}` × {dim}", values.len(), f.size, f.name)));
        }
        if let Some((k, v)) = values.iter().enumerate().find(|(_, v)| **v as usize >= t.size) {
            return Err(Error::Config(format!("map `{name}`: entry {k} is {v}, `{}` has {} elements", t.name, t.size)));
        }
        self.maps.push(Map { name: name.into(), from, to, dim, values });
        Ok(MapId(self.maps.len() - 1))
    }

    /// A datum of `dim` values per element of `set`.
    pub fn dat(&mut self, name: &str, set: SetId, dim: usize, values: Vec<T>) -> Result<DatId, Error> {
        let s = &self.sets[set.0];
        if values.len() != s.size * dim {
            return Err(Error::Config(format!("dat `{name}`: {} values for {} elements of `{}` × {dim}", values.len(), s.size, s.name)));
        }
        self.dats.push(Dat { name: name.into(), set, dim, values });
        Ok(DatId(self.dats.len() - 1))
    }

    /// A global holding `values` (its dimension is their number).
    pub fn global(&mut self, name: &str, values: Vec<T>) -> GlobalId {
        self.globals.push(Global { name: name.into(), values });
        GlobalId(self.globals.len() - 1)
    }

    /// Map `m`: its name, source and target sets, dimension and entries.
    pub fn map_info(&self, m: MapId) -> (&str, SetId, SetId, usize, &[u32]) {
        let map = &self.maps[m.0];
        (&map.name, map.from, map.to, map.dim, &map.values)
    }

    /// Every map, in declaration order.
    pub fn maps(&self) -> Vec<MapId> {
        (0..self.maps.len()).map(MapId).collect()
    }

    /// Dat `d`: its name, set and dimension.
    pub fn dat_info(&self, d: DatId) -> (&str, SetId, usize) {
        let dat = &self.dats[d.0];
        (&dat.name, dat.set, dat.dim)
    }

    /// How `inc` globals are summed: `None`, element by element into the global (OP2's
    /// sequential order); `Some(A)`, as the compiled hardware sums them — the element in slot k
    /// of the order (counted from the first element) into partial k mod A (each from +0), then
    /// the global's old value plus partial 0, 1, …, A − 1 in turn.
    pub fn set_interleave(&mut self, lanes: Option<usize>) {
        self.interleave = lanes.filter(|a| *a > 0);
    }

    /// With [`App::set_interleave`]: the hardware has `pipelines` pipelines, so an order is rows of
    /// that many slots, and a row's values are first summed pairwise — ((v0 + v1) + (v2 + v3)) + …,
    /// an empty slot giving −0 — then the row's sum goes into partial (row mod A).
    pub fn set_pipelines(&mut self, pipelines: usize) {
        self.pipelines = pipelines.max(1).next_power_of_two();
    }

    /// Every set, in declaration order.
    pub fn sets(&self) -> Vec<SetId> {
        (0..self.sets.len()).map(SetId).collect()
    }

    /// The name `s` was declared with.
    pub fn set_name(&self, s: SetId) -> &str {
        &self.sets[s.0].name
    }

    /// The number of elements of `s`.
    pub fn set_size(&self, s: SetId) -> usize {
        self.sets[s.0].size
    }

    /// The values of `d`: element by element, `dim` values each.
    pub fn values(&self, d: DatId) -> &[T] {
        &self.dats[d.0].values
    }

    /// Replaces the values of `d` (as many as it has).
    pub fn set_values(&mut self, d: DatId, values: &[T]) -> Result<(), Error> {
        let dat = &mut self.dats[d.0];
        if values.len() != dat.values.len() {
            return Err(Error::Config(format!("dat `{}`: {} values given, it has {}", dat.name, values.len(), dat.values.len())));
        }
        dat.values.copy_from_slice(values);
        Ok(())
    }

    /// The current values of global `g`.
    pub fn global_values(&self, g: GlobalId) -> &[T] {
        &self.globals[g.0].values
    }

    /// Replaces the values of global `g`; `values` must have its dimension (else this panics).
    pub fn set_global(&mut self, g: GlobalId, values: &[T]) {
        self.globals[g.0].values.copy_from_slice(values);
    }

    /// Checks that `args` fit a loop over `set`: the error names the loop, the argument and the
    /// rule.
    fn check(&self, name: &str, set: SetId, args: &[Arg]) -> Result<(), Error> {
        let bad = |k: usize, why: String| Err(Error::Config(format!("loop `{name}` over `{}`, argument {k}: {why}", self.sets[set.0].name)));
        for (k, arg) in args.iter().enumerate() {
            match *arg {
                Arg::Direct(d, access) | Arg::Indirect(d, _, _, access) if matches!(access, Access::Min | Access::Max) => {
                    return bad(k, format!("`{}` is a dat: Min and Max reduce globals only", self.dats[d.0].name));
                }
                Arg::Direct(d, _) if self.dats[d.0].set != set => {
                    return bad(k, format!("`{}` lives on `{}`: reach it through a map", self.dats[d.0].name, self.sets[self.dats[d.0].set.0].name));
                }
                Arg::Indirect(d, m, i, _) => {
                    let map = &self.maps[m.0];
                    if map.from != set {
                        return bad(k, format!("map `{}` starts from `{}`", map.name, self.sets[map.from.0].name));
                    }
                    if map.to != self.dats[d.0].set {
                        return bad(k, format!("map `{}` reaches `{}`, `{}` lives on `{}`", map.name, self.sets[map.to.0].name, self.dats[d.0].name, self.sets[self.dats[d.0].set.0].name));
                    }
                    if i >= map.dim {
                        return bad(k, format!("index {i} of map `{}`: allowed 0..{}", map.name, map.dim));
                    }
                }
                Arg::Global(g, Access::Write | Access::Rw) => return bad(k, format!("global `{}`: Write and Rw are not reductions (allowed Read, Inc, Min, Max)", self.globals[g.0].name)),
                _ => {}
            }
        }
        Ok(())
    }

    /// Where argument `arg` of element `e` lives: its datum (or global) and first value.
    fn place(&self, arg: &Arg, e: usize) -> (usize, usize, bool) {
        match *arg {
            Arg::Direct(d, _) => (d.0, e * self.dats[d.0].dim, false),
            Arg::Indirect(d, m, i, _) => {
                let map = &self.maps[m.0];
                (d.0, map.values[e * map.dim + i] as usize * self.dats[d.0].dim, false)
            }
            Arg::Global(g, _) => (g.0, 0, true),
        }
    }

    /// What each element of a loop over `set` increments through maps: per element, the
    /// elements of the incremented data it adds into (numbered across data, so two data never
    /// share a number), once each. Two elements that share one must not be in an accumulating
    /// pipeline at the same time: this is the conflict relation a hardware schedule respects
    /// (see [`crate::app::schedule`]).
    pub fn increments(&self, name: &str, set: SetId, args: &[Arg]) -> Result<Vec<Vec<u32>>, Error> {
        self.check(name, set, args)?;
        let base: Vec<usize> = self.dats.iter().scan(0, |acc, d| Some(std::mem::replace(acc, *acc + self.sets[d.set.0].size))).collect();
        Ok((0..self.sets[set.0].size)
            .map(|e| {
                let mut targets: Vec<u32> = vec![];
                for arg in args {
                    if let Arg::Indirect(d, m, i, Access::Inc) = *arg {
                        let map = &self.maps[m.0];
                        let t = (base[d.0] + map.values[e * map.dim + i] as usize) as u32;
                        if !targets.contains(&t) {
                            targets.push(t);
                        }
                    }
                }
                targets
            })
            .collect())
    }

    /// Runs `kernel` over every element of `set` in order (see the module's description);
    /// `kernel` gets one buffer per argument, in the order of `args`.
    pub fn par_loop(&mut self, name: &str, set: SetId, args: &[Arg], kernel: &dyn Fn(&mut [Vec<T>])) -> Result<(), Error> {
        let order: Vec<Option<u32>> = (0..self.sets[set.0].size as u32).map(Some).collect();
        self.par_loop_in(name, set, args, &order, kernel)
    }

    /// [`App::par_loop`] visiting the elements in `order` — a hardware schedule's slots, no-ops
    /// (`None`) skipped — which must name every element of `set` exactly once: what the
    /// generated hardware computes when it issues the loop in that order.
    pub fn par_loop_in(&mut self, name: &str, set: SetId, args: &[Arg], order: &[Option<u32>], kernel: &dyn Fn(&mut [Vec<T>])) -> Result<(), Error> {
        self.par_loop_order(name, set, args, order, true, kernel)
    }

    /// [`App::par_loop_in`] over some of the elements only (each at most once): what one node of
    /// a partitioned application runs ([`crate::app::partition`]).
    pub fn par_loop_part(&mut self, name: &str, set: SetId, args: &[Arg], order: &[Option<u32>], kernel: &dyn Fn(&mut [Vec<T>])) -> Result<(), Error> {
        self.par_loop_order(name, set, args, order, false, kernel)
    }

    fn par_loop_order(&mut self, name: &str, set: SetId, args: &[Arg], order: &[Option<u32>], complete: bool, kernel: &dyn Fn(&mut [Vec<T>])) -> Result<(), Error> {
        self.check(name, set, args)?;
        let size = self.sets[set.0].size;
        let mut seen = vec![false; size];
        for e in order.iter().flatten() {
            match seen.get_mut(*e as usize) {
                Some(s) if !*s => *s = true,
                Some(_) => return Err(Error::Config(format!("loop `{name}`: the order visits element {e} twice"))),
                None => return Err(Error::Config(format!("loop `{name}`: the order names element {e}, `{}` has {size}", self.sets[set.0].name))),
            }
        }
        if let Some(e) = seen.iter().position(|s| !s).filter(|_| complete) {
            return Err(Error::Config(format!("loop `{name}`: the order never visits element {e}")));
        }
        let dims: Vec<usize> = args
            .iter()
            .map(|a| match *a {
                Arg::Direct(d, _) | Arg::Indirect(d, _, _, _) => self.dats[d.0].dim,
                Arg::Global(g, _) => self.globals[g.0].values.len(),
            })
            .collect();
        let mut bufs: Vec<Vec<T>> = dims.iter().map(|&n| vec![T::zero(); n]).collect();
        let mut places = Vec::with_capacity(args.len());
        // Interleaved sums of `inc` globals: partial[argument][row mod A][component], rows counted
        // from the first with an element (a row of no-ops adds nothing); a row's values wait in
        // `row` until the row is summed.
        let lanes = self.interleave.unwrap_or(0);
        let rows = self.pipelines;
        let mut partials: Vec<Vec<Vec<T>>> = args.iter().zip(&dims).map(|(a, &d)| if matches!(a, Arg::Global(_, Access::Inc)) { vec![vec![T::zero(); d]; lanes] } else { vec![] }).collect();
        let mut row: Vec<Vec<Vec<T>>> = dims.iter().map(|&d| vec![vec![-T::zero(); d]; rows]).collect();
        let mut current: Option<usize> = None;
        let first = order.iter().position(Option::is_some).unwrap_or(0) / rows;
        let flush = |row: &mut Vec<Vec<Vec<T>>>, partials: &mut Vec<Vec<Vec<T>>>, r: usize| {
            for (k, arg) in args.iter().enumerate() {
                if matches!(arg, Arg::Global(_, Access::Inc)) {
                    let sum = tree(&row[k]);
                    partials[k][(r - first) % lanes].iter_mut().zip(&sum).for_each(|(t, b)| *t = *t + *b);
                    row[k].iter_mut().for_each(|lane| lane.fill(-T::zero()));
                }
            }
        };
        for (slot, e) in order.iter().enumerate().filter_map(|(i, e)| e.map(|e| (i, e as usize))) {
            if lanes > 0 && current.is_some_and(|r| r != slot / rows) {
                flush(&mut row, &mut partials, current.unwrap_or(0));
            }
            current = Some(slot / rows);
            places.clear();
            places.extend(args.iter().map(|arg| self.place(arg, e)));
            for (k, (arg, &(at, lo, global))) in args.iter().zip(&places).enumerate() {
                let source = if global { &self.globals[at].values[..] } else { &self.dats[at].values[lo..lo + dims[k]] };
                match arg.access() {
                    Access::Inc => bufs[k].fill(T::zero()),
                    _ => bufs[k].copy_from_slice(source),
                }
            }
            kernel(&mut bufs);
            for (k, (arg, &(at, lo, global))) in args.iter().zip(&places).enumerate() {
                let target = if global { &mut self.globals[at].values[..] } else { &mut self.dats[at].values[lo..lo + dims[k]] };
                if global && lanes > 0 && arg.access() == Access::Inc {
                    row[k][slot % rows].copy_from_slice(&bufs[k]);
                    continue;
                }
                match arg.access() {
                    Access::Read => {}
                    Access::Write | Access::Rw => target.copy_from_slice(&bufs[k]),
                    Access::Inc => target.iter_mut().zip(&bufs[k]).for_each(|(t, b)| *t = *t + *b),
                    Access::Min => target.iter_mut().zip(&bufs[k]).for_each(|(t, b)| *t = extreme(*t, *b, false)),
                    Access::Max => target.iter_mut().zip(&bufs[k]).for_each(|(t, b)| *t = extreme(*t, *b, true)),
                }
            }
        }
        if let (Some(r), true) = (current, lanes > 0) {
            flush(&mut row, &mut partials, r);
        }
        for (k, arg) in args.iter().enumerate() {
            if let (Arg::Global(g, Access::Inc), true) = (arg, lanes > 0) {
                for p in &partials[k] {
                    self.globals[g.0].values.iter_mut().zip(p).for_each(|(t, b)| *t = *t + *b);
                }
            }
        }
        Ok(())
    }
}

/// Lanes summed pairwise, level by level: ((l0 + l1) + (l2 + l3)) + … (one lane: itself).
fn tree<T: Float>(lanes: &[Vec<T>]) -> Vec<T> {
    let mut level: Vec<Vec<T>> = lanes.to_vec();
    while level.len() > 1 {
        level = level.chunks(2).map(|pair| pair[0].iter().zip(&pair[1]).map(|(a, b)| *a + *b).collect()).collect();
    }
    level.pop().unwrap_or_default()
}

/// The larger (`max`) or smaller of the running value `t` and a new value `b`, in IEEE 754-2019's
/// maximumNumber / minimumNumber order: a NaN running value gives way to `b`, a NaN `b` is
/// ignored, and −0 is below +0 (the compiled reduction compares the same way).
pub(super) fn extreme<T: Float>(t: T, b: T, max: bool) -> T {
    if t.is_nan() {
        return b;
    }
    if b.is_nan() {
        return t;
    }
    let above = b > t || b == t && t.is_sign_negative() && b.is_sign_positive();
    let below = b < t || b == t && t.is_sign_positive() && b.is_sign_negative();
    if max && above || !max && below {
        b
    } else {
        t
    }
}
