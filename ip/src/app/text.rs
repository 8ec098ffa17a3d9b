//! The application file: a mesh application written as text (see the format in
//! `examples/apps/README.md`), parsed into its declarations, loops and program. Every error
//! names the line and column.

use weft_hdl::pipeline::dsl::DslError;

use super::program::Access;

/// Where a piece of text starts (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    /// Line number, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl At {
    /// A parse error at this position with `message`.
    pub fn error(self, message: impl Into<String>) -> DslError {
        DslError { line: self.line, column: self.column, message: message.into() }
    }
}

/// A word of a line and where it starts.
#[derive(Clone, Debug)]
pub struct Word {
    /// The text, trimmed of surrounding white space.
    pub text: String,
    /// Where the trimmed text starts.
    pub at: At,
}

/// The element type of every dat, global and constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// IEEE-754 binary64 (`f64` in the file).
    F64,
    /// IEEE-754 binary32 (`f32` in the file).
    F32,
}

impl Precision {
    /// Its name in an application file: `f64` or `f32`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
        }
    }

    /// Bits of one value.
    pub fn bits(self) -> usize {
        match self {
            Precision::F64 => 64,
            Precision::F32 => 32,
        }
    }
}

/// Where a dat's first values come from.
#[derive(Clone, Debug)]
pub enum Init {
    /// Every value zero (no `from mesh` and no `= constant`).
    Zero,
    /// The mesh's datum of the same name.
    Mesh,
    /// Every element set to a constant (a scalar, or an array of the dat's dimension).
    Constant(Word),
}

/// `map name: from -> to, dim`: a map whose entries come from the mesh.
#[derive(Clone, Debug)]
pub struct MapDecl {
    /// The map's name, as the mesh names it.
    pub name: Word,
    /// The set it maps from.
    pub from: Word,
    /// The set its entries are elements of.
    pub to: Word,
    /// Entries per element of `from` (1 or more).
    pub dim: usize,
}

/// `matrix name: rows x cols from mesh`: a constant matrix (row-major, from the mesh's matrix of
/// the same name) for the dense products of `dense` loops.
#[derive(Clone, Debug)]
pub struct MatrixDecl {
    /// The matrix's name.
    pub name: Word,
    /// Rows R.
    pub rows: usize,
    /// Columns C.
    pub cols: usize,
}

/// `dat name: set, dim [from mesh | = constant]`: a datum on a set.
#[derive(Clone, Debug)]
pub struct DatDecl {
    /// The dat's name.
    pub name: Word,
    /// The set it lives on.
    pub set: Word,
    /// Values per element (1 or more).
    pub dim: usize,
    /// Where its first values come from.
    pub init: Init,
}

/// `name = expression` or `name = [e0, e1, …]`, in the kernel language over earlier constants.
#[derive(Clone, Debug)]
pub struct ConstDecl {
    /// The constant's name.
    pub name: Word,
    /// Its expressions: one for a scalar, one per component for an array.
    pub values: Vec<Word>,
}

/// One loop argument: `name = dat [via map[i]] access`, `name = dat via map access` (every entry
/// of the map: a `dense` loop's operand) or `name = global access`.
#[derive(Clone, Debug)]
pub struct ArgDecl {
    /// The name the kernel uses for the argument.
    pub name: Word,
    /// The dat or global it reaches.
    pub target: Word,
    /// The map and the entry index (from 0) it goes through, for an indirect argument; no index
    /// for every entry.
    pub via: Option<(Word, Option<usize>)>,
    /// How the loop uses it: read, write, rw, inc, min or max.
    pub access: Access,
}

/// `loop name over set`, its arguments, and after `kernel` (or `dense [lanes P]`) its body, up to
/// `end`.
#[derive(Clone, Debug)]
pub struct LoopDecl {
    /// The loop's name.
    pub name: Word,
    /// The set it runs over.
    pub set: Word,
    /// Its arguments, in order.
    pub args: Vec<ArgDecl>,
    /// The kernel's lines in the kernel language (or a dense loop's products), with their line
    /// numbers.
    pub body: Vec<(usize, String)>,
    /// A `dense` loop: its lanes (multipliers per product) and where `dense` stands.
    pub dense: Option<(usize, At)>,
}

/// One step of the `program` block.
#[derive(Clone, Debug)]
pub enum Step {
    /// Runs the named loop.
    Loop(Word),
    /// `global = expression` (every component).
    Assign(Word, Word),
    /// `repeat N` (N ≥ 1) and its steps up to `end`.
    Repeat(usize, Vec<Step>),
    /// `print every N: expression` (the outermost repeat's count, from 1).
    Print(usize, Word),
}

/// A parsed application file: every declaration in file order, and the program.
#[derive(Clone, Debug)]
pub struct AppText {
    /// The application's name (`app name: type`).
    pub name: String,
    /// The element type of every dat, global and constant.
    pub precision: Precision,
    /// The sets' names; their sizes come from the mesh.
    pub sets: Vec<Word>,
    /// The maps.
    pub maps: Vec<MapDecl>,
    /// The dats.
    pub dats: Vec<DatDecl>,
    /// The constants, in declaration order.
    pub consts: Vec<ConstDecl>,
    /// The matrices.
    pub matrices: Vec<MatrixDecl>,
    /// The globals: name and dimension (1 or more).
    pub globals: Vec<(Word, usize)>,
    /// The loops.
    pub loops: Vec<LoopDecl>,
    /// The steps of the `program` block (empty without one).
    pub program: Vec<Step>,
}

fn strip_comment(line: &str) -> &str {
    match line.find('#') {
        Some(i) => &line[..i],
        None => line,
    }
}

/// `text` (a slice of `line`, which is line `number`) with its position.
fn word(line: &str, number: usize, text: &str) -> Word {
    let offset = text.as_ptr() as usize - line.as_ptr() as usize;
    Word { text: text.trim().to_string(), at: At { line: number, column: line[..offset].chars().count() + 1 + (text.len() - text.trim_start().len()) } }
}

fn identifier(w: &Word, what: &str) -> Result<Word, DslError> {
    let ok = w.text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && w.text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(w.clone())
    } else {
        Err(w.at.error(format!("expected {what}, found `{}`", w.text)))
    }
}

fn number(w: &Word, what: &str, low: usize) -> Result<usize, DslError> {
    w.text.parse::<usize>().ok().filter(|n| *n >= low).ok_or_else(|| w.at.error(format!("{what}: expected a whole number of at least {low}, found `{}`", w.text)))
}

/// Splits `text` (part of `line`) at the first `sep`.
fn split<'a>(line: &'a str, number: usize, text: &'a str, sep: &str, what: &str) -> Result<(&'a str, &'a str), DslError> {
    text.split_once(sep).ok_or_else(|| word(line, number, text).at.error(format!("expected `{sep}` {what}")))
}

fn access(w: &Word) -> Result<Access, DslError> {
    Ok(match w.text.as_str() {
        "read" => Access::Read,
        "write" => Access::Write,
        "rw" => Access::Rw,
        "inc" => Access::Inc,
        "min" => Access::Min,
        "max" => Access::Max,
        other => return Err(w.at.error(format!("unknown access `{other}`: allowed read, write, rw, inc (and min, max for globals)"))),
    })
}

/// `name = dat via map[i] access` (the part after the loop line).
fn argument(line: &str, n: usize) -> Result<ArgDecl, DslError> {
    let text = strip_comment(line);
    let (name, rest) = split(line, n, text, "=", "between an argument's name and what it reaches")?;
    let name = identifier(&word(line, n, name), "an argument name")?;
    let words: Vec<Word> = rest.split_whitespace().map(|w| word(line, n, w)).collect();
    let (target, via, last) = match words.as_slice() {
        [t, a] => (t, None, a),
        [t, v, m, a] if v.text == "via" => match m.text.strip_suffix(']').and_then(|s| s.split_once('[')) {
            Some((map, index)) => {
                let index = number(&Word { text: index.into(), at: m.at }, "a map index", 0)?;
                (t, Some((Word { text: map.into(), at: m.at }, Some(index))), a)
            }
            None => (t, Some((identifier(m, "`map` or `map[index]`")?, None)), a),
        },
        _ => return Err(name.at.error("an argument is `name = dat access`, `name = dat via map[index] access`, `name = dat via map access` or `name = global access`")),
    };
    Ok(ArgDecl { name, target: identifier(target, "a dat or global")?, via, access: access(last)? })
}

/// Parses an application file.
pub fn parse(source: &str) -> Result<AppText, DslError> {
    let lines: Vec<&str> = source.lines().collect();
    let mut app =
        AppText { name: String::new(), precision: Precision::F64, sets: vec![], maps: vec![], dats: vec![], consts: vec![], matrices: vec![], globals: vec![], loops: vec![], program: vec![] };
    let mut i = 0;
    while i < lines.len() {
        let (n, line) = (i + 1, lines[i]);
        i += 1;
        let text = strip_comment(line);
        let Some((keyword, rest)) = text.trim_start().split_once(char::is_whitespace).or(Some((text.trim(), ""))).filter(|(k, _)| !k.is_empty()) else { continue };
        let at = word(line, n, keyword).at;
        match keyword {
            "app" => {
                let (name, ty) = split(line, n, rest, ":", "between the application's name and its type (f64 or f32)")?;
                app.name = identifier(&word(line, n, name), "the application's name")?.text;
                let ty = word(line, n, ty);
                app.precision = match ty.text.as_str() {
                    "f64" => Precision::F64,
                    "f32" => Precision::F32,
                    other => return Err(ty.at.error(format!("the application's type is f64 or f32, not `{other}`"))),
                };
            }
            "set" => {
                for s in rest.split(',') {
                    app.sets.push(identifier(&word(line, n, s), "a set name")?);
                }
            }
            "map" => {
                let (name, rest) = split(line, n, rest, ":", "after the map's name")?;
                let (from, rest) = split(line, n, rest, "->", "between the sets a map joins")?;
                let (to, dim) = split(line, n, rest, ",", "before the map's dimension")?;
                let dim = number(&word(line, n, dim), "a map's dimension", 1)?;
                app.maps.push(MapDecl { name: identifier(&word(line, n, name), "a map name")?, from: word(line, n, from), to: word(line, n, to), dim });
            }
            "dat" => {
                let (name, rest) = split(line, n, rest, ":", "after the dat's name")?;
                let (set, rest) = split(line, n, rest, ",", "before the dat's dimension")?;
                let (dim, init) = match rest.split_once('=') {
                    Some((d, c)) => (d, Init::Constant(identifier(&word(line, n, c), "a constant")?)),
                    None => match rest.trim().strip_suffix("from mesh") {
                        Some(d) => (d, Init::Mesh),
                        None => (rest, Init::Zero),
                    },
                };
                let dim = number(&word(line, n, dim.trim_end()), "a dat's dimension", 1)?;
                app.dats.push(DatDecl { name: identifier(&word(line, n, name), "a dat name")?, set: word(line, n, set), dim, init });
            }
            "const" => {
                let (name, value) = split(line, n, rest, "=", "after the constant's name")?;
                let name = identifier(&word(line, n, name), "a constant name")?;
                let v = value.trim();
                let values = match v.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                    Some(items) => items.split(',').map(|e| word(line, n, e)).collect(),
                    None => vec![word(line, n, value)],
                };
                app.consts.push(ConstDecl { name, values });
            }
            "matrix" => {
                let (name, rest) = split(line, n, rest, ":", "after the matrix's name")?;
                let shape = rest.trim().strip_suffix("from mesh").ok_or_else(|| word(line, n, rest).at.error("a matrix is `matrix name: rows x cols from mesh`"))?;
                let (rows, cols) = split(line, n, shape, "x", "between a matrix's rows and columns")?;
                let (rows, cols) = (number(&word(line, n, rows), "a matrix's rows", 1)?, number(&word(line, n, cols), "a matrix's columns", 1)?);
                app.matrices.push(MatrixDecl { name: identifier(&word(line, n, name), "a matrix name")?, rows, cols });
            }
            "global" => {
                let (name, dim) = split(line, n, rest, ":", "after the global's name")?;
                app.globals.push((identifier(&word(line, n, name), "a global name")?, number(&word(line, n, dim), "a global's dimension", 1)?));
            }
            "loop" => {
                let (name, set) = split(line, n, rest, " over ", "between the loop's name and its set")?;
                let mut decl = LoopDecl { name: identifier(&word(line, n, name), "a loop name")?, set: identifier(&word(line, n, set), "a set name")?, args: vec![], body: vec![], dense: None };
                let mut in_kernel = false;
                loop {
                    let Some(l) = lines.get(i) else { return Err(at.error(format!("loop `{}` has no `end`", decl.name.text))) };
                    i += 1;
                    let trimmed = strip_comment(l).trim();
                    match trimmed {
                        "" => {}
                        "end" => break,
                        "kernel" if !in_kernel => in_kernel = true,
                        _ if !in_kernel && (trimmed == "dense" || trimmed.starts_with("dense ")) => {
                            let w = word(l, i, trimmed);
                            let lanes = match trimmed["dense".len()..].trim() {
                                "" => 1,
                                rest => match rest.strip_prefix("lanes ") {
                                    Some(p) => number(&word(l, i, p), "dense lanes", 1)?,
                                    None => return Err(w.at.error("a dense loop's body starts with `dense` or `dense lanes P`")),
                                },
                            };
                            decl.dense = Some((lanes, w.at));
                            in_kernel = true;
                        }
                        _ if in_kernel => decl.body.push((i, strip_comment(l).to_string())),
                        _ => decl.args.push(argument(l, i)?),
                    }
                }
                app.loops.push(decl);
            }
            "program" => {
                let (steps, next) = steps(&lines, i, at)?;
                app.program = steps;
                i = next;
            }
            other => return Err(at.error(format!("unknown declaration `{other}`: allowed app, set, map, dat, const, matrix, global, loop, program"))),
        }
    }
    if app.name.is_empty() {
        return Err(At { line: 1, column: 1 }.error("no `app <name>: <type>` line"));
    }
    Ok(app)
}

/// The steps of a `program` or `repeat` block from line index `i` to its `end`; returns them
/// and the index after the `end`.
fn steps(lines: &[&str], mut i: usize, opened: At) -> Result<(Vec<Step>, usize), DslError> {
    let mut out = vec![];
    loop {
        let Some(line) = lines.get(i) else { return Err(opened.error("this block has no `end`")) };
        let n = i + 1;
        i += 1;
        let text = strip_comment(line);
        let trimmed = text.trim();
        if trimmed.is_empty() {
            continue;
        }
        let w = word(line, n, trimmed);
        if trimmed == "end" {
            return Ok((out, i));
        }
        if let Some(count) = trimmed.strip_prefix("repeat ") {
            let count = number(&word(line, n, count), "a repeat count", 1)?;
            let (inner, next) = steps(lines, i, w.at)?;
            out.push(Step::Repeat(count, inner));
            i = next;
        } else if let Some(rest) = trimmed.strip_prefix("print every ") {
            let (every, expr) = split(line, n, rest, ":", "between the print interval and its expression")?;
            out.push(Step::Print(number(&word(line, n, every), "a print interval", 1)?, word(line, n, expr)));
        } else if let Some((global, expr)) = text.split_once('=') {
            out.push(Step::Assign(identifier(&word(line, n, global), "a global")?, word(line, n, expr)));
        } else {
            out.push(Step::Loop(identifier(&w, "a loop name, `repeat N`, `print every N: expression` or `global = expression`")?));
        }
    }
}
