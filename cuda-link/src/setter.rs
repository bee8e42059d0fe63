//! `option_setter!`: the builder setter of one option field, shared by
//! `LinkerOptions` and `cuda-compile`'s `ProgramOptions`. Not part of the
//! API.

/// A setter named after the field: `some` takes the `T` of an
/// `Option<T>`, `text` an `impl Into<T>` for an `Option<T>`, `flag` the
/// value itself, `items` any iterable of the item type, `list` any
/// iterable of things that convert to the item type.
#[doc(hidden)]
#[macro_export]
macro_rules! option_setter {
    (some $field:ident $arg:ty) => {
        #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        pub fn $field(mut self, value: $arg) -> Self {
            self.$field = Some(value);
            self
        }
    };
    (text $field:ident $arg:ty) => {
        #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        pub fn $field(mut self, value: impl Into<$arg>) -> Self {
            self.$field = Some(value.into());
            self
        }
    };
    (flag $field:ident $arg:ty) => {
        #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        pub fn $field(mut self, value: $arg) -> Self {
            self.$field = value;
            self
        }
    };
    (items $field:ident $arg:ty) => {
        #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        pub fn $field(mut self, values: impl IntoIterator<Item = $arg>) -> Self {
            self.$field = values.into_iter().collect();
            self
        }
    };
    (list $field:ident $arg:ty) => {
        #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        pub fn $field<S: Into<$arg>>(mut self, values: impl IntoIterator<Item = S>) -> Self {
            self.$field = values.into_iter().map(Into::into).collect();
            self
        }
    };
}
