//! What one compile asks NVRTC for and what it made, and that as a
//! compile cache entry.

use cuda_link::ObjectCode;

use crate::error::CompileError;
use crate::nvrtc::Target;
use crate::program::Program;

/// What a compile asks for: a target, and for a cubin, whether the PTX it
/// was compiled from too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub(crate) target: Target,
    pub(crate) ptx: bool,
}

impl Wanted {
    /// What the cache key names: `"cubin"`, or `"cubin+PTX"`.
    pub(crate) fn name(self) -> String {
        match self.ptx {
            true => format!("{}+PTX", self.target.name()),
            false => self.target.name().to_owned(),
        }
    }
}

/// What a compile made: its output, the PTX when asked for, NVRTC's log.
/// Cheap to clone: the outputs share their bytes.
#[derive(Clone)]
pub(crate) struct Made {
    pub(crate) code: ObjectCode,
    pub(crate) ptx: Option<ObjectCode>,
    pub(crate) log: String,
}

impl Made {
    /// The cache entry: the output, the PTX when there is one, NVRTC's
    /// log, and each name expression with its lowered name, NUL-separated.
    pub(crate) fn entry(&self) -> cuda_link::CacheEntry {
        let mut lowered = Vec::new();
        for (expression, name) in self.code.name_expressions() {
            for part in [expression, name] {
                lowered.extend_from_slice(part.as_bytes());
                lowered.push(0);
            }
        }
        let entry = cuda_link::CacheEntry::default()
            .with("output", self.code.as_bytes())
            .with("log", self.log.as_bytes())
            .with("lowered", lowered);
        match &self.ptx {
            Some(ptx) => entry.with("ptx", ptx.as_bytes()),
            None => entry,
        }
    }

    /// The outputs named as `program`'s, as [`output_code`] names them.
    pub(crate) fn named_for(self, program: &Program, wanted: Wanted) -> Made {
        let name = |target: Target| format!("{} ({})", program.name, target.name());
        Made {
            code: self.code.renamed(name(wanted.target)),
            ptx: self.ptx.map(|ptx| ptx.renamed(name(Target::Ptx))),
            log: self.log,
        }
    }

    /// A cache hit as a compile's result; `Err` (so the entry is dropped and
    /// the program compiled again) when it does not validate or decode.
    pub(crate) fn from_entry(
        program: &Program,
        wanted: Wanted,
        mut entry: cuda_link::CacheEntry,
    ) -> Result<Made, cuda_link::ObjectError> {
        let corrupt = |detail: &str| cuda_link::ObjectError {
            name: program.name.clone(),
            reason: cuda_link::Reason::Malformed {
                what: "compile cache entry",
                detail: detail.to_owned(),
            },
        };
        let text =
            |bytes: &[u8]| String::from_utf8(bytes.to_vec()).map_err(|_| corrupt("not UTF-8"));
        let log = text(entry.get("log").ok_or_else(|| corrupt("no log"))?)?;
        let lowered = text(
            entry
                .get("lowered")
                .ok_or_else(|| corrupt("no lowered names"))?,
        )?;
        let mut parts = lowered.split_terminator('\0').map(str::to_owned);
        let mut pairs = Vec::new();
        while let Some(expression) = parts.next() {
            let name = parts
                .next()
                .ok_or_else(|| corrupt("a name expression without its name"))?;
            pairs.push((expression, name));
        }
        let names_match = pairs.len() == program.name_expressions.len()
            && pairs
                .iter()
                .zip(&program.name_expressions)
                .all(|((given, _), expected)| given == expected);
        if !names_match {
            return Err(corrupt("name expressions differ from the program's"));
        }
        let mut code = |field: &str, target: Target| {
            let bytes = entry
                .take(field)
                .ok_or_else(|| corrupt(&format!("no {field}")))?;
            output_code(program, target, bytes).map_err(|e| match e {
                CompileError::Output { error, .. } => error,
                other => corrupt(&other.to_string()),
            })
        };
        let output = code("output", wanted.target)?;
        let ptx = match wanted.ptx {
            true => Some(code("ptx", Target::Ptx)?),
            false => None,
        };
        Ok(Made {
            code: output.with_name_expressions(pairs),
            ptx,
            log,
        })
    }
}

/// NVRTC's output as validated device code.
pub(crate) fn output_code(
    program: &Program,
    target: Target,
    bytes: Vec<u8>,
) -> Result<ObjectCode, CompileError> {
    let name = format!("{} ({})", program.name, target.name());
    let code = match target {
        Target::Ptx => ObjectCode::from_ptx(bytes, name),
        Target::Ltoir => ObjectCode::from_ltoir(bytes, name),
        Target::Cubin => ObjectCode::from_cubin(bytes, name),
    };
    code.map_err(|error| CompileError::Output {
        program: program.name.clone(),
        error,
    })
}
