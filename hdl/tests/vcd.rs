//! The built-in simulator's VCD: instances become nested scopes holding their named signals, and
//! the values written are the simulated ones (a counter inside an instance, checked cycle by cycle
//! against its definition).

use std::rc::Rc;

use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::netlist::{Design, Netlist};

#[test]
fn instances_are_scopes_and_values_follow_the_simulation() {
    let child = {
        let mut n = Netlist::new();
        let step = n.input("step", 4);
        let r = n.register("count", 8, 0);
        let wide = n.zext(step, 8);
        let next = n.add(r.q, wide);
        n.drive(r, next);
        n.output("count", r.q);
        Rc::new(n)
    };
    let d = Design::new();
    let step = d.input("step", 4);
    let c = d.instance(&child, "counter", "counter0");
    c.input("step").define(step);
    d.output("total", c.output("count"));
    let mut e = Evaluator::new(d.finish());
    let mut vcd = e.vcd(Vec::new(), "top", 10).unwrap();
    for k in 0..6u128 {
        e.set_input("step", k + 1);
        e.settle();
        e.sample(&mut vcd).unwrap();
        e.clock(false);
    }
    let text = String::from_utf8(vcd.finish().unwrap()).unwrap();
    let header: Vec<&str> = text.lines().take_while(|l| !l.starts_with("$enddefinitions")).collect();
    // Nesting: top > counter0, with the instance's register inside its scope.
    let at = |needle: &str| header.iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("no `{needle}` in\n{}", header.join("\n")));
    let (top, inst, count, up) = (at("$scope module top"), at("$scope module counter0"), at(" count [7:0] $end"), header.iter().rposition(|l| *l == "$upscope $end").unwrap());
    assert!(top < inst && inst < count && count < up);
    assert_eq!(header.iter().filter(|l| l.starts_with("$scope")).count(), header.iter().filter(|l| l.starts_with("$upscope")).count());
    // The register's code and its values: 0, 1, 3, 6, 10, 15 (running sum of 1..).
    let code = header[count].split_whitespace().nth(3).unwrap();
    let values: Vec<u128> =
        text.lines().filter_map(|l| l.strip_prefix('b')).filter(|l| l.ends_with(&format!(" {code}"))).map(|l| u128::from_str_radix(l.split(' ').next().unwrap(), 2).unwrap()).collect();
    assert_eq!(values, vec![0, 1, 3, 6, 10, 15]);
}
