#[test]
fn integration_ok() {
    assert_eq!(parsertests::add(0, 0), 0);
}

#[test]
fn integration_fails() {
    let v: Vec<i32> = Vec::new();
    println!("about to index");
    let _ = v[3];
}
