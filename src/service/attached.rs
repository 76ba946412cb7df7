//! What other parts of the service keep with a thread's state without the state knowing its
//! type, as `http::Extensions` does for a request: the state holds it and drops it with
//! itself, and never names the modules that own it, so those modules can name the state
//! (the kept cuts of budgeted renders hold a state of their window).

use std::any::Any;

/// At most one value of each type.
#[derive(Default)]
pub(super) struct Attached {
    values: Vec<Box<dyn Any + Send + Sync>>,
}

impl Attached {
    /// The value of type `T`, if one is attached.
    pub(super) fn get<T: Any>(&self) -> Option<&T> {
        self.values.iter().find_map(|value| value.downcast_ref())
    }

    /// The value of type `T`, attached first (as its default) if there is none.
    pub(super) fn get_or_default<T: Any + Send + Sync + Default>(&mut self) -> &mut T {
        let at = match self.values.iter().position(|value| value.is::<T>()) {
            Some(at) => at,
            None => {
                self.values.push(Box::new(T::default()));
                self.values.len() - 1
            }
        };
        self.values[at].downcast_mut().expect("found by its type")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type_kept_between_calls() {
        let mut attached = Attached::default();
        assert!(attached.get::<Vec<u8>>().is_none());
        attached.get_or_default::<Vec<u8>>().push(1);
        attached.get_or_default::<Vec<u8>>().push(2);
        *attached.get_or_default::<u32>() = 7;
        assert_eq!(attached.get::<Vec<u8>>(), Some(&vec![1, 2]));
        assert_eq!(attached.get::<u32>(), Some(&7));
    }
}
