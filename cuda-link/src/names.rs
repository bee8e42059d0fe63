//! [`NameList`]: many short names in two allocations.

use std::fmt;

/// A list of names kept in one string, for lists that can be as long as
/// the input: a PTX text of 40,000 kernels defines 40,000 strong symbols,
/// and one `String` each made most of the page faults of inspecting it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct NameList {
    text: String,
    /// Where each name ends in `text`.
    ends: Vec<usize>,
}

impl NameList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a name.
    pub fn push(&mut self, name: &str) {
        self.text.push_str(name);
        self.ends.push(self.text.len());
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The names, in the order they were pushed.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + Clone + '_ {
        (0..self.ends.len()).map(|i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            &self.text[start..self.ends[i]]
        })
    }
}

impl<'a> Extend<&'a str> for NameList {
    fn extend<I: IntoIterator<Item = &'a str>>(&mut self, names: I) {
        for name in names {
            self.push(name);
        }
    }
}

impl<'a> FromIterator<&'a str> for NameList {
    fn from_iter<I: IntoIterator<Item = &'a str>>(names: I) -> Self {
        let mut list = NameList::new();
        list.extend(names);
        list
    }
}

impl fmt::Debug for NameList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A JSON array of strings, as a `Vec<String>` would be.
#[cfg(feature = "serde")]
impl serde::Serialize for NameList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_names_apart_and_in_order() {
        let list: NameList = ["a", "", "bc", "a"].into_iter().collect();
        assert_eq!(list.len(), 4);
        assert_eq!(list.iter().collect::<Vec<_>>(), ["a", "", "bc", "a"]);
        assert_eq!(format!("{list:?}"), r#"["a", "", "bc", "a"]"#);
        assert!(NameList::new().is_empty());
        assert_eq!(NameList::new().iter().count(), 0);
    }
}
