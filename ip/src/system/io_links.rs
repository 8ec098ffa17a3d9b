//! A node's links over the board's IO channels (`LinkConfig::io_channels`): one
//! [`crate::link::io_link`] per endpoint, between the router and the endpoint's channel ports.

use crate::Error;
use std::rc::Rc;

use weft_hdl::netlist::{AxisShape, Design, Inst, Netlist, Sig};

use crate::link::io_link::{channel_shape, CHANNEL_BITS, COUNTERS};
use crate::router::Direction;

/// The link facing direction `e` over the board's IO channels: the router's output `e` leaves
/// on channels `m_axis_<e>_ch<k>`, flits travelling the other way arrive on `s_axis_<e>_ch<k>`
/// into the router's input for `e`'s opposite. Returns its `channel_up`.
#[allow(clippy::too_many_arguments)]
pub(super) fn io_link_to<'d>(
    d: &'d Design,
    net: &Rc<Netlist>,
    width: usize,
    router: &Inst<'d>,
    dirs: &[Direction],
    e: Direction,
    counters: &[String],
    counter_in: &[Sig<'d>],
) -> Result<Sig<'d>, Error> {
    let en = e.name();
    let link = d.instance(net, "io_link", &format!("io_link_{en}"));
    let shape = AxisShape::data(width).with_keep().with_user(1);
    let to_link = link.sink("s_axis", shape);
    if dirs.contains(&e) {
        d.connect(&router.source(&format!("m_axis_{en}"), shape), &to_link)?;
        router.input(&format!("m_axis_{en}_credit")).define(link.output("tx_credit"));
    } else {
        to_link.idle();
    }
    let arriving = e.opposite();
    let from_link = link.source("m_axis", shape.always_ready());
    if dirs.contains(&arriving) {
        let an = arriving.name();
        d.connect(&from_link, &router.sink(&format!("s_axis_{an}"), shape.always_ready()))?;
        link.input("rx_credit_return").define(router.output(&format!("s_axis_{an}_credit")));
    } else {
        link.input("rx_credit_return").define(0u32);
    }
    for k in 0..width / CHANNEL_BITS {
        d.connect(&link.source(&format!("m_axis_ch{k}"), channel_shape()), &d.axis_out(&format!("m_axis_{en}_ch{k}"), channel_shape()))?;
        d.connect(&d.axis_in(&format!("s_axis_{en}_ch{k}"), channel_shape()), &link.sink(&format!("s_axis_ch{k}"), channel_shape()))?;
    }
    let up = link.output("channel_up");
    d.output(&format!("{en}_channel_up"), up);
    for name in COUNTERS {
        let i = counters.iter().position(|x| *x == format!("{en}_{name}")).unwrap();
        counter_in[i].define(link.output(name));
    }
    Ok(up)
}
