//! The messages between the caller and a link worker, written into their
//! shared memory (`shared.rs`) while the socket carries their lengths. A
//! request holds the flags, the output kind and each input's kind, name
//! and validated image; an answer a tag and the link's outcome. Fields are
//! a u64 length and their bytes.

use nvjitlink_sys::{NvJitLinkError, sys::nvJitLinkResult};

use super::super::{LinkError, Logs, OutputKind};
use crate::kind::ObjectKind;
use crate::object_code::ObjectCode;

/// The nvJitLink calls a link makes, for naming a failure a worker saw.
const CALLS: &[&str] = &[
    "nvJitLinkCreate",
    "nvJitLinkAddData",
    "nvJitLinkComplete",
    "nvJitLinkGetLinkedCubinSize",
    "nvJitLinkGetLinkedPtxSize",
    "nvJitLinkGetLinkedLTOIRSize",
    "nvJitLinkGetLinkedCubin",
    "nvJitLinkGetLinkedPtx",
    "nvJitLinkGetLinkedLTOIR",
    "nvJitLinkGetErrorLogSize",
    "nvJitLinkGetErrorLog",
    "nvJitLinkGetInfoLogSize",
    "nvJitLinkGetInfoLog",
    "nvJitLinkDestroy",
];

fn call_name(name: &str) -> &'static str {
    known(CALLS, name, "nvJitLink")
}

/// The entry of `calls` that a worker's answer named, as a `'static`
/// name; `library` for a name that is none of them.
pub(super) fn known(calls: &[&'static str], name: &str, library: &'static str) -> &'static str {
    calls
        .iter()
        .copied()
        .find(|&c| c == name)
        .unwrap_or(library)
}

/// The request: flags, the output kind, then each input's kind, name and
/// validated image, as fields of a u64 length and its bytes, each given
/// to `put` in order.
fn request_fields(
    flags: &[String],
    inputs: &[ObjectCode],
    output: OutputKind,
    mut put: impl FnMut(&[u8]),
) {
    let mut field = |bytes: &[u8]| {
        put(&(bytes.len() as u64).to_le_bytes());
        put(bytes);
    };
    field(&(flags.len() as u64).to_le_bytes());
    for flag in flags {
        field(flag.as_bytes());
    }
    field(&[match output {
        OutputKind::Cubin => 0,
        OutputKind::Ptx => 1,
        OutputKind::Ltoir => 2,
    }]);
    field(&(inputs.len() as u64).to_le_bytes());
    for input in inputs {
        let kind = ObjectKind::ALL
            .iter()
            .position(|&k| k == input.kind())
            .unwrap_or(0);
        field(&[kind as u8]);
        field(input.name().as_bytes());
        field(input.image().as_bytes());
    }
}

/// The length of the request.
pub(super) fn request_len(flags: &[String], inputs: &[ObjectCode], output: OutputKind) -> usize {
    let mut len = 0;
    request_fields(flags, inputs, output, |bytes| len += bytes.len());
    len
}

/// Writes the request into `out`, which is [`request_len`] long.
pub(super) fn write_request(
    out: &mut [u8],
    flags: &[String],
    inputs: &[ObjectCode],
    output: OutputKind,
) {
    let mut at = 0;
    request_fields(flags, inputs, output, |bytes| {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    });
}

/// Reads fields of a u64 length and its bytes.
pub(super) struct Fields<'a>(pub(super) &'a [u8]);

impl<'a> Fields<'a> {
    pub(super) fn next(&mut self) -> Result<&'a [u8], LinkError> {
        let garbled = || LinkError::Isolation {
            detail: "a message between the caller and its link worker is cut short".into(),
        };
        let len = self.0.get(..8).ok_or_else(garbled)?;
        let len = u64::from_le_bytes(len.try_into().map_err(|_| garbled())?);
        let len = usize::try_from(len).map_err(|_| garbled())?;
        let bytes = self
            .0
            .get(8..)
            .and_then(|rest| rest.get(..len))
            .ok_or_else(garbled)?;
        self.0 = &self.0[8 + len..];
        Ok(bytes)
    }

    pub(super) fn count(&mut self) -> Result<u64, LinkError> {
        let bytes = self.next()?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    pub(super) fn text(&mut self) -> Result<String, LinkError> {
        self.next()
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
    }
}

pub(super) fn decode_request(
    request: &bytes::Bytes,
) -> Result<(Vec<String>, Vec<ObjectCode>, OutputKind), LinkError> {
    let mut fields = Fields(request);
    let flags = (0..fields.count()?)
        .map(|_| fields.text())
        .collect::<Result<_, _>>()?;
    let output = match fields.next()? {
        [1] => OutputKind::Ptx,
        [2] => OutputKind::Ltoir,
        _ => OutputKind::Cubin,
    };
    let mut inputs = Vec::new();
    for _ in 0..fields.count()? {
        let kind = fields.next()?.first().copied().unwrap_or(0);
        let kind = ObjectKind::ALL[usize::from(kind).min(ObjectKind::ALL.len() - 1)];
        let name = fields.text()?;
        // A view of the request, not a copy.
        let image = request.slice_ref(fields.next()?);
        inputs.push(ObjectCode::from_validated_image(kind, image, name));
    }
    Ok((flags, inputs, output))
}

// The answer: a tag byte, then fields, each a u64 length and its bytes.
const LINKED: u8 = 0;
const NVJITLINK_FAILED: u8 = 1;
const INVALID_OPTION: u8 = 2;
const SYMBOL_UNAVAILABLE: u8 = 3;

pub(super) fn encode(result: &Result<(Vec<u8>, Logs), LinkError>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut field = |bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    let tag = match result {
        Ok((bytes, (info, error))) => {
            field(bytes);
            field(info.as_bytes());
            field(error.as_bytes());
            LINKED
        }
        Err(LinkError::NvJitLink {
            call,
            error,
            input,
            error_log,
            info_log,
            ..
        }) => {
            field(call.as_bytes());
            field(&error.result.0.to_le_bytes());
            field(input.as_deref().unwrap_or_default().as_bytes());
            field(&[u8::from(input.is_some())]);
            field(error_log.as_bytes());
            field(info_log.as_bytes());
            NVJITLINK_FAILED
        }
        Err(LinkError::InvalidOption { detail, .. }) => {
            field(detail.as_bytes());
            INVALID_OPTION
        }
        Err(LinkError::SymbolUnavailable { symbol, .. }) => {
            field(symbol.as_bytes());
            SYMBOL_UNAVAILABLE
        }
        Err(other) => {
            // No other error comes out of the nvJitLink backend.
            field(other.to_string().as_bytes());
            INVALID_OPTION
        }
    };
    out.insert(0, tag);
    out
}

pub(super) fn decode(answer: &[u8], inputs: &[ObjectCode]) -> Result<(Vec<u8>, Logs), LinkError> {
    let (&tag, rest) = answer.split_first().ok_or_else(|| LinkError::Isolation {
        detail: "the link worker's answer is empty".into(),
    })?;
    let mut fields = Fields(rest);
    match tag {
        LINKED => {
            let bytes = fields.next()?.to_vec();
            Ok((bytes, (fields.text()?, fields.text()?)))
        }
        NVJITLINK_FAILED => {
            let call = call_name(&fields.text()?);
            let code = fields.next()?.try_into().unwrap_or_default();
            let input = fields.text()?;
            let has_input = fields.next()? == [1];
            Err(LinkError::NvJitLink {
                call,
                error: NvJitLinkError {
                    result: nvJitLinkResult(u32::from_le_bytes(code)),
                },
                input: has_input.then_some(input),
                inputs: inputs.iter().map(|i| i.name().to_owned()).collect(),
                error_log: fields.text()?,
                info_log: fields.text()?,
            })
        }
        INVALID_OPTION => Err(LinkError::InvalidOption {
            option: "flags",
            detail: fields.text()?,
        }),
        SYMBOL_UNAVAILABLE => Err(LinkError::SymbolUnavailable {
            library: "nvJitLink",
            symbol: call_name(&fields.text()?),
        }),
        other => Err(LinkError::Isolation {
            detail: format!("the link worker answered with an unknown tag {other}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip() {
        let linked: Result<(Vec<u8>, Logs), LinkError> =
            Ok((vec![1, 2, 3], ("info".into(), "error".into())));
        let (bytes, logs) = decode(&encode(&linked), &[]).unwrap();
        assert_eq!(bytes, [1, 2, 3]);
        assert_eq!(logs, ("info".to_owned(), "error".to_owned()));
        let failed: Result<(Vec<u8>, Logs), LinkError> = Err(LinkError::NvJitLink {
            call: "nvJitLinkComplete",
            error: NvJitLinkError {
                result: nvJitLinkResult(4),
            },
            input: None,
            inputs: Vec::new(),
            error_log: "undefined reference".into(),
            info_log: String::new(),
        });
        match decode(&encode(&failed), &[]) {
            Err(LinkError::NvJitLink {
                call: "nvJitLinkComplete",
                error,
                input: None,
                error_log,
                ..
            }) => {
                assert_eq!(error.result, nvJitLinkResult(4));
                assert_eq!(error_log, "undefined reference");
            }
            other => panic!("{other:?}"),
        }
        let answer = encode(&linked);
        for cut in 0..answer.len() {
            assert!(decode(&answer[..cut], &[]).is_err(), "{cut}");
        }
    }

    #[test]
    fn requests_round_trip() {
        let ptx = ObjectCode::from_ptx(
            b".version 8.0\n.target sm_90\n.address_size 64\n".to_vec(),
            "k.ptx",
        )
        .unwrap();
        let flags = ["-arch=sm_90".to_owned(), "-lto".to_owned()];
        let inputs = std::slice::from_ref(&ptx);
        let mut request = vec![0; request_len(&flags, inputs, OutputKind::Ptx)];
        write_request(&mut request, &flags, inputs, OutputKind::Ptx);
        let request = bytes::Bytes::from(request);
        let (decoded_flags, inputs, output) = decode_request(&request).unwrap();
        assert_eq!(decoded_flags, flags);
        assert_eq!(output, OutputKind::Ptx);
        assert_eq!(inputs[0].name(), "k.ptx");
        assert_eq!(inputs[0].kind(), ObjectKind::Ptx);
        assert_eq!(inputs[0].image().as_bytes(), ptx.image().as_bytes());
        for cut in 0..request.len() {
            assert!(decode_request(&request.slice(..cut)).is_err(), "{cut}");
        }
    }
}
