//! Quick-Start (RFC 4782) in the routers: approval or reduction of a request on each hop.

use super::*;

/// Quick-Start support in the routers (built only when a flow uses Quick-Start).
pub(super) struct QsRouters {
    /// Per node: it processes Quick-Start requests.
    pub(super) participates: Vec<bool>,
    /// Per channel leaving a participating router: its admission state.
    pub(super) links: Vec<Option<QsLink>>,
    /// Per participating node: its stream of fresh nonce bits.
    pub(super) rng: Vec<Option<rand_pcg::Pcg64>>,
    pub(super) share: f64,
}

impl Simulation {
    /// A Quick-Start router processes a Rate Request on the link it forwards it to (ALGORITHMS.md
    /// §10.1 RESOLVED): approve N iff `share·capacity − utilisation over the window − Σ rates
    /// approved in the window >= rate(N)`, else lower N to the largest code that fits (fresh nonce
    /// bits above it), else N = 0; QS TTL drops by one with the IP TTL. Non-participating routers
    /// leave the option untouched.
    pub(super) fn quick_start_hop(&mut self, node: u32, pkt: u32) {
        let Some(qs) = self.qs.as_mut() else { return };
        if !qs.participates[node as usize] {
            return;
        }
        let p = self.arena.get_mut(pkt);
        let (Some(mut req), Some(c)) = (p.qs, self.net.routes.next(node, p.dst)) else { return };
        if req.code == 0 {
            return;
        }
        let capacity = self.net.channels[c as usize].rate.bps() as f64;
        let (Some(link), Some(rng)) = (qs.links[c as usize].as_mut(), qs.rng[node as usize].as_mut()) else { return };
        let allowed = qs_code_for(link.available(self.now, capacity, qs.share));
        let approved = req.process(allowed, rng.random::<u32>());
        if approved > 0 {
            link.approve(self.now, qs_rate_bps(approved));
        }
        p.qs = Some(req);
    }
}
