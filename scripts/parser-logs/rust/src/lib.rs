//! Tiny crate whose tests pass, fail, are ignored and crash, for the log-parser fixtures.

/// Adds two numbers.
///
/// ```
/// assert_eq!(parsertests::add(2, 2), 4);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

/// Subtracts (wrongly, on purpose).
///
/// ```
/// assert_eq!(parsertests::sub(3, 2), 1);
/// ```
pub fn sub(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 3);
    }

    #[test]
    fn subtracts() {
        assert_eq!(sub(3, 2), 1);
    }

    #[test]
    #[ignore]
    fn slow_one() {}

    #[test]
    #[ignore = "needs a network"]
    fn with_reason() {}

    #[test]
    #[should_panic(expected = "boom")]
    fn panics_as_expected() {
        panic!("boom");
    }

    #[test]
    fn ünïcode_name() {
        println!("printed by a test");
        assert!(true);
    }

    mod nested {
        #[test]
        fn deep_test() {
            print!("no newline from a test");
        }
    }
}

#[cfg(feature = "broken")]
pub fn does_not_compile() -> i32 {
    "text"
}
