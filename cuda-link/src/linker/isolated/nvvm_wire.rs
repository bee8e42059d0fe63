//! The messages of an isolated libNVVM compile, in the framing of
//! `wire.rs`: the request holds the options, libdevice and each module's
//! name and bytes; the answer a tag and the compile's outcome.

use std::sync::Arc;

use nvvm_sys::Nvvm;
use nvvm_sys::sys::nvvmResult;

use super::super::LinkError;
use super::wire::Fields;
use crate::nvvm_program::{NvvmFailure, NvvmOutput, RawRequest};

/// The libNVVM calls a compile makes, for naming a failure a worker saw.
const CALLS: &[&str] = &[
    "nvvmCreateProgram",
    "nvvmAddModuleToProgram",
    "nvvmLazyAddModuleToProgram",
    "nvvmVerifyProgram",
    "nvvmCompileProgram",
    "nvvmGetCompiledResultSize",
    "nvvmGetCompiledResult",
];

fn call_name(name: &str) -> &'static str {
    super::wire::known(CALLS, name, "libNVVM")
}

/// The request's fields, each given to `put` as a u64 length and bytes.
fn request_fields(raw: &RawRequest<'_>, mut put: impl FnMut(&[u8])) {
    let mut field = |bytes: &[u8]| {
        put(&(bytes.len() as u64).to_le_bytes());
        put(bytes);
    };
    field(&(raw.options.len() as u64).to_le_bytes());
    for option in raw.options {
        field(option.as_bytes());
    }
    field(&[u8::from(raw.libdevice.is_some())]);
    field(raw.libdevice.unwrap_or_default());
    field(&(raw.modules.len() as u64).to_le_bytes());
    for (name, bytes) in raw.modules {
        field(name.as_bytes());
        field(bytes);
    }
}

/// The length of the request.
pub(super) fn request_len(raw: &RawRequest<'_>) -> usize {
    let mut len = 0;
    request_fields(raw, |bytes| len += bytes.len());
    len
}

/// Writes the request into `out`, which is [`request_len`] long.
pub(super) fn write_request(out: &mut [u8], raw: &RawRequest<'_>) {
    let mut at = 0;
    request_fields(raw, |bytes| {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    });
}

// The answer's tags.
const COMPILED: u8 = 0;
const VERIFY: u8 = 1;
const COMPILE: u8 = 2;
const CALL: u8 = 3;
const MISSING: u8 = 4;
const INPUT: u8 = 5;

/// The worker's side: decodes the request, runs libNVVM, encodes what
/// came of it.
pub(super) fn answer(lib: &Arc<Nvvm>, request: &[u8]) -> Vec<u8> {
    let outcome = decode_request(request, |raw| crate::nvvm_program::run(lib, raw));
    let outcome = outcome.unwrap_or_else(|error| {
        Err(NvvmFailure::Input {
            name: "the request".into(),
            detail: error.to_string(),
        })
    });
    encode(&outcome)
}

fn decode_request<T>(
    request: &[u8],
    then: impl FnOnce(&RawRequest<'_>) -> T,
) -> Result<T, LinkError> {
    let mut fields = Fields(request);
    let options = (0..fields.count()?)
        .map(|_| fields.text())
        .collect::<Result<Vec<_>, _>>()?;
    let has_libdevice = fields.next()? == [1];
    let libdevice = fields.next()?;
    let mut modules = Vec::new();
    for _ in 0..fields.count()? {
        let name = std::str::from_utf8(fields.next()?).unwrap_or("?");
        modules.push((name, fields.next()?));
    }
    Ok(then(&RawRequest {
        modules: &modules,
        libdevice: has_libdevice.then_some(libdevice),
        options: &options,
    }))
}

fn encode(outcome: &Result<NvvmOutput, NvvmFailure>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut field = |bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    let tag = match outcome {
        Ok(output) => {
            field(&output.code);
            field(output.log.as_bytes());
            COMPILED
        }
        Err(NvvmFailure::Verify { log, .. }) => {
            field(log.as_bytes());
            VERIFY
        }
        Err(NvvmFailure::Compile { log, .. }) => {
            field(log.as_bytes());
            COMPILE
        }
        Err(NvvmFailure::Call {
            call, error, log, ..
        }) => {
            field(call.as_bytes());
            field(&error.result.0.to_le_bytes());
            field(log.as_bytes());
            CALL
        }
        Err(NvvmFailure::Missing(missing)) => {
            field(missing.symbol.as_bytes());
            MISSING
        }
        Err(other) => {
            field(other.to_string().as_bytes());
            INPUT
        }
    };
    out.insert(0, tag);
    out
}

/// The caller's side of [`encode`]; `Err` when the answer is garbled.
pub(super) fn decode(
    answer: &[u8],
    raw: &RawRequest<'_>,
) -> Result<Result<NvvmOutput, NvvmFailure>, LinkError> {
    let (&tag, rest) = answer.split_first().ok_or_else(|| LinkError::Isolation {
        detail: "the libNVVM worker's answer is empty".into(),
    })?;
    let modules = || raw.modules.iter().map(|(n, _)| (*n).to_owned()).collect();
    let mut fields = Fields(rest);
    Ok(match tag {
        COMPILED => Ok(NvvmOutput {
            code: fields.next()?.to_vec(),
            log: fields.text()?,
        }),
        VERIFY => Err(NvvmFailure::Verify {
            modules: modules(),
            log: fields.text()?,
        }),
        COMPILE => Err(NvvmFailure::Compile {
            modules: modules(),
            log: fields.text()?,
        }),
        CALL => {
            let call = call_name(&fields.text()?);
            let code = fields
                .next()?
                .try_into()
                .map_err(|_| LinkError::Isolation {
                    detail: "the libNVVM worker answered a result code of the wrong size".into(),
                })?;
            Err(NvvmFailure::Call {
                call,
                error: nvvm_sys::NvvmError {
                    result: nvvmResult(u32::from_le_bytes(code)),
                },
                modules: modules(),
                log: fields.text()?,
            })
        }
        MISSING => Err(NvvmFailure::Missing(nvvm_sys::SymbolUnavailable {
            library: "libNVVM",
            symbol: call_name(&fields.text()?),
        })),
        INPUT => Err(NvvmFailure::Input {
            name: modules().join(", "),
            detail: fields.text()?,
        }),
        other => {
            return Err(LinkError::Isolation {
                detail: format!("the libNVVM worker answered with an unknown tag {other}"),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers_round_trip() {
        let options = ["-arch=compute_90".to_owned(), "-gen-lto".to_owned()];
        let modules: [(&str, &[u8]); 2] = [("a.ll", b"define"), ("b.bc", b"BC\xC0\xDE")];
        let raw = RawRequest {
            modules: &modules,
            libdevice: Some(b"libdevice"),
            options: &options,
        };
        let mut out = vec![0; request_len(&raw)];
        write_request(&mut out, &raw);
        let seen = decode_request(&out, |seen| {
            (
                seen.options.to_vec(),
                seen.libdevice.map(<[u8]>::to_vec),
                seen.modules
                    .iter()
                    .map(|(n, b)| (n.to_string(), b.to_vec()))
                    .collect::<Vec<_>>(),
            )
        })
        .unwrap();
        assert_eq!(seen.0, options);
        assert_eq!(seen.1.as_deref(), Some(&b"libdevice"[..]));
        assert_eq!(seen.2[1], ("b.bc".to_owned(), b"BC\xC0\xDE".to_vec()));
        let failed = Err(NvvmFailure::Call {
            call: "nvvmAddModuleToProgram",
            error: nvvm_sys::NvvmError {
                result: nvvmResult::NVVM_ERROR_INVALID_INPUT,
            },
            modules: vec!["a.ll".into(), "b.bc".into()],
            log: "bad".into(),
        });
        assert_eq!(decode(&encode(&failed), &raw).unwrap(), failed);
        let made = Ok(NvvmOutput {
            code: b".version".to_vec(),
            log: String::new(),
        });
        assert_eq!(decode(&encode(&made), &raw).unwrap(), made);
        assert!(decode(&[9], &raw).is_err());
        // A result code of the wrong size is a garbled answer, not success.
        let mut short = vec![CALL];
        for field in [&b"nvvmCompileProgram"[..], &[1, 0], b"log"] {
            short.extend_from_slice(&(field.len() as u64).to_le_bytes());
            short.extend_from_slice(field);
        }
        assert!(matches!(
            decode(&short, &raw),
            Err(LinkError::Isolation { .. })
        ));
    }
}
