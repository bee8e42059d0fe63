//! One description per linker option: [`linker_options!`] writes the
//! `LinkerOptions` struct, its setters and [`LinkerOptions::settings`] from
//! one list, and both backends and the cache key are derived from the
//! settings, so an option cannot reach one backend and miss the other.

use cuda_driver_sys::sys::CUjit_option;

use crate::arch::Arch;

/// How an option reaches nvJitLink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NvJitLinkFlag {
    /// `-time` when on.
    Switch(&'static str),
    /// `-maxrregcount=` followed by the number, when set.
    Number(&'static str),
    /// `-ftz=` followed by `0` or `1`, when set: the spelling nvJitLink
    /// documents, as libNVVM refuses `=true` under LTO.
    ZeroOne(&'static str),
    /// `-kernels-used=` followed by each value.
    Each(&'static str),
    /// Decided by the linker from more than the option (arch, LTO, PTX).
    Resolved,
    /// Not a flag: how or where the link runs, or what it is called.
    NotAFlag,
}

/// How an option reaches the driver's `cuLink*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DriverOption {
    /// `key` with the option's value: 1 for a switch, the number, 0 or 1.
    Key(CUjit_option),
    /// `key` with this value, when the option is on.
    Value(CUjit_option, usize),
    /// An output option the driver writes (`CU_JIT_WALL_TIME`).
    Output(CUjit_option),
    /// The names under the first key, their count under the second.
    Names(CUjit_option, CUjit_option),
    /// Decided by the linker (`CU_JIT_TARGET`, `CU_JIT_LTO`).
    Resolved,
    /// `cuLink*` cannot honour it: setting it is an
    /// [`UnsupportedOption`](crate::LinkError::UnsupportedOption) error.
    Unsupported,
    /// Not an option of the link itself.
    NotAnOption,
}

/// An option's value, as the backends read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    /// An on/off option.
    Switch(bool),
    /// A number, when set.
    Number(Option<u32>),
    /// An explicit on or off, when set.
    ZeroOne(Option<bool>),
    /// A list of strings.
    List(&'a [String]),
    /// Something else (arch, name, backend, isolation): whether it is set
    /// to other than its default.
    Other { set: bool },
}

impl Value<'_> {
    /// Whether the option differs from its default.
    pub fn is_set(&self) -> bool {
        match *self {
            Value::Switch(on) => on,
            Value::Number(number) => number.is_some(),
            Value::ZeroOne(value) => value.is_some(),
            Value::List(values) => !values.is_empty(),
            Value::Other { set } => set,
        }
    }
}

/// Converts a field to its [`Value`].
pub(crate) trait AsValue {
    fn as_value(&self) -> Value<'_>;
}

impl AsValue for bool {
    fn as_value(&self) -> Value<'_> {
        Value::Switch(*self)
    }
}

impl AsValue for Option<u32> {
    fn as_value(&self) -> Value<'_> {
        Value::Number(*self)
    }
}

impl AsValue for Option<bool> {
    fn as_value(&self) -> Value<'_> {
        Value::ZeroOne(*self)
    }
}

impl AsValue for Vec<String> {
    fn as_value(&self) -> Value<'_> {
        Value::List(self)
    }
}

impl AsValue for Option<Arch> {
    fn as_value(&self) -> Value<'_> {
        Value::Other {
            set: self.is_some(),
        }
    }
}

impl AsValue for Option<crate::PtxIsa> {
    fn as_value(&self) -> Value<'_> {
        Value::Other {
            set: self.is_some(),
        }
    }
}

impl AsValue for Option<String> {
    fn as_value(&self) -> Value<'_> {
        Value::Other {
            set: self.is_some(),
        }
    }
}

/// One option: its field name, value and how each backend takes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setting<'a> {
    /// The field's name, as errors name it.
    pub name: &'static str,
    pub value: Value<'a>,
    pub nvjitlink: NvJitLinkFlag,
    pub driver: DriverOption,
}

impl Setting<'_> {
    /// The nvJitLink flags this setting adds, in order.
    pub fn nvjitlink_flags(&self, flags: &mut Vec<String>) {
        match (self.nvjitlink, self.value) {
            (NvJitLinkFlag::Switch(flag), Value::Switch(true)) => flags.push(flag.to_owned()),
            (NvJitLinkFlag::Number(flag), Value::Number(Some(n))) => {
                flags.push(format!("{flag}{n}"))
            }
            (NvJitLinkFlag::ZeroOne(flag), Value::ZeroOne(Some(on))) => {
                flags.push(format!("{flag}{}", u8::from(on)));
            }
            (NvJitLinkFlag::Each(flag), Value::List(values)) => {
                flags.extend(values.iter().map(|value| format!("{flag}{value}")));
            }
            _ => {}
        }
    }
}

/// Writes `LinkerOptions` (its fields with their docs), a setter per field
/// and `settings()`, from one entry per option:
/// `field: Type, setter-kind Argument, nvJitLink spelling, driver option;`.
/// Setter kinds: `some` (takes the `T` of an `Option<T>`), `text` (an
/// `impl Into<String>`), `flag` (the value itself), `list` (any iterable
/// of strings), `items` (any iterable of the item type).
macro_rules! linker_options {
    (
        $(#[$struct_doc:meta])* ;
        $($(#[$doc:meta])* $field:ident : $ty:ty, $kind:ident $arg:ty, $nvjitlink:expr, $driver:expr;)*
    ) => {
        $(#[$struct_doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub struct LinkerOptions {
            $($(#[$doc])* pub $field: $ty,)*
        }

        impl LinkerOptions {
            $($crate::option_setter!($kind $field $arg);)*

            /// The name of every option, in the order of the fields.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// The names of the options set to other than their defaults:
            /// what a log or a tool shows of a link's options.
            pub fn names_set(&self) -> Vec<&'static str> {
                self.settings()
                    .into_iter()
                    .filter(|setting| setting.value.is_set())
                    .map(|setting| setting.name)
                    .collect()
            }

            /// Every option with its value and how each backend takes it,
            /// in the order of the fields.
            pub(crate) fn settings(&self) -> Vec<$crate::linker::settings::Setting<'_>> {
                use $crate::linker::settings::AsValue as _;
                vec![$($crate::linker::settings::Setting {
                    name: stringify!($field),
                    value: self.$field.as_value(),
                    nvjitlink: $nvjitlink,
                    driver: $driver,
                },)*]
            }
        }
    };
}
pub(crate) use linker_options;
