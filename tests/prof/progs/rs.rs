// rs.rs - a Rust program for the profiler's name tests (tests/prof/run.sh
// test_rust): its CPU time is in geo::churn, built by the test with each
// symbol mangling (legacy, v0).
//
//   rs N    N rounds of an LCG
mod geo {
    #[inline(never)]
    pub fn churn(n: u64) -> u64 {
        let mut s: u64 = 0;
        for i in 0..n {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(i ^ (s >> 7));
        }
        s
    }
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    println!("{}", geo::churn(std::hint::black_box(n)) % 2);
}
