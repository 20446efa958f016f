// SPDX-License-Identifier: GPL-2.0

//! The tests of value statistics: the arithmetic.

use super::*;

// ---------------------------------------------------------------------
// The arithmetic.

/// The slot as the map keeps it: the maximum of the encoded values.
fn fold(stat: Statistic, signed: bool, values: &[u64]) -> u64 {
    let SlotOp::Max { xor } = stat.slot_op(signed) else {
        return values.iter().fold(0u64, |s, &v| s.wrapping_add(v));
    };
    values.iter().fold(0, |m, &v| m.max(v ^ xor))
}

#[test]
fn suffixes() {
    assert_eq!(Statistic::split("lat.max"), Some(("lat", Statistic::Max)));
    assert_eq!(
        Statistic::split("common_timestamp.usecs.min"),
        Some(("common_timestamp.usecs", Statistic::Min))
    );
    assert_eq!(Statistic::split("a-b.avg"), Some(("a-b", Statistic::Avg)));
    assert_eq!(Statistic::split(".max"), None);
    assert_eq!(Statistic::split("max"), None);
    assert_eq!(Statistic::split("lat.maximum"), None);
    assert_eq!(Statistic::split("lat.max."), None);
    for s in [Statistic::Min, Statistic::Max, Statistic::Avg] {
        let text = std::format!("x.{}", s.name());
        assert_eq!(Statistic::split(&text), Some(("x", s)));
    }
}

#[test]
fn min_and_max_of_unsigned_and_signed_values() {
    let signed: [i64; 5] = [-5, 3, i64::MIN, 0, i64::MAX];
    let as_u64: std::vec::Vec<u64> = signed.iter().map(|&v| v as u64).collect();
    let get = |stat: Statistic, signed: bool| {
        stat.value(signed, fold(stat, signed, &as_u64), as_u64.len() as u64)
    };
    assert_eq!(get(Statistic::Min, true) as i64, i64::MIN);
    assert_eq!(get(Statistic::Max, true) as i64, i64::MAX);
    assert_eq!(get(Statistic::Min, false), 0);
    assert_eq!(get(Statistic::Max, false), -5i64 as u64);
    let small: [i64; 3] = [-5, 3, -1];
    let small: std::vec::Vec<u64> = small.iter().map(|&v| v as u64).collect();
    let get = |stat: Statistic, signed: bool| stat.value(signed, fold(stat, signed, &small), 3);
    assert_eq!(get(Statistic::Min, true) as i64, -5);
    assert_eq!(get(Statistic::Max, true) as i64, 3);
    assert_eq!(get(Statistic::Min, false), 3);
    assert_eq!(get(Statistic::Max, false), u64::MAX);
}

#[test]
fn the_identity_is_zero() {
    // A slot no event touched reads as the statistic of nothing, and
    // any value replaces it.
    assert_eq!(Statistic::Min.value(false, 0, 0), u64::MAX);
    assert_eq!(Statistic::Min.value(true, 0, 0) as i64, i64::MAX);
    assert_eq!(Statistic::Max.value(true, 0, 0) as i64, i64::MIN);
    assert_eq!(Statistic::Avg.value(true, 0, 0), 0);
}

#[test]
fn averages_divide_as_the_kernel() {
    assert_eq!(per_hit(10, 3, false), 3);
    assert_eq!(per_hit(u64::MAX, 2, false), u64::MAX / 2);
    // -10 / 3 rounds toward zero, as div64_s64().
    assert_eq!(per_hit(-10i64 as u64, 3, true) as i64, -3);
    assert_eq!(per_hit(10, 3, true), 3);
    assert_eq!(per_hit(7, 0, false), 0);
    // Unsigned, the same sum is a large number.
    assert_eq!(per_hit(-10i64 as u64, 3, false), (u64::MAX - 9) / 3);
}
