//! The shipped binary64 operators in the built-in simulator: hand-picked special operands
//! (signed zeros, infinities, NaN, subnormals, extremes) and random pairs under random
//! back-pressure, every result equal to native `f64`.

#[test]
fn shipped_binary64_operators_match_native_f64() {
    let shipped = weft_ip::fp::binary64::shipped();
    assert_eq!(shipped.len(), 4);
    for module in shipped {
        let summary = (module.testbench)().unwrap_or_else(|e| panic!("{}: {e}", module.spec.name));
        assert!(summary.contains("match native f64"), "{}: {summary}", module.spec.name);
    }
}
