#[test]
fn before_the_crash() {}

#[test]
fn aborts_the_process() {
    std::process::abort();
}
