//! Duplicate strong definitions across a link's inputs: nvJitLink 13
//! reports one on stderr only, and links.

use crate::object_code::ObjectCode;

use super::LinkError;

/// The strong definitions of a link's inputs so far, each with where it
/// is: added to input by input, so a link of n inputs checks each symbol
/// once. The names are the one copy a link keeps; the inputs' own lists
/// are borrowed.
#[derive(Debug, Default)]
pub(super) struct Definitions {
    /// Each name, and the index in `places` of its first definition.
    first: foldhash::HashMap<String, usize>,
    /// `input` or `input (member m)`, once per input or member.
    places: Vec<String>,
}

impl Definitions {
    /// Records `input`'s strong definitions, or fails, recording nothing,
    /// when one of them is already defined by an earlier input or by
    /// another member of its own archive. Weak definitions (template
    /// instantiations, inline functions) are not strong and pass.
    pub fn admit(&mut self, input: &ObjectCode) -> Result<(), LinkError> {
        let place = |member: Option<&str>| match member {
            Some(member) => format!("{} (member {member})", input.name()),
            None => input.name().to_owned(),
        };
        let symbols = input.strong_symbols()?;
        let mut own = foldhash::HashMap::<&str, Option<&str>>::default();
        for &(name, member) in &symbols {
            let first = match (self.first.get(name), own.get(name)) {
                (Some(&first), _) => Some(self.places[first].clone()),
                (None, Some(&other)) if other != member => Some(place(other)),
                _ => None,
            };
            if let Some(first) = first {
                return Err(LinkError::DuplicateDefinition {
                    symbol: name.to_owned(),
                    first,
                    second: place(member),
                });
            }
            own.insert(name, member);
        }
        let mut places = foldhash::HashMap::<Option<&str>, usize>::default();
        for (name, member) in own {
            let index = *places.entry(member).or_insert_with(|| {
                self.places.push(place(member));
                self.places.len() - 1
            });
            self.first.insert(name.to_owned(), index);
        }
        Ok(())
    }
}
