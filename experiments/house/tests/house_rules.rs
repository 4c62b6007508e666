//! The house rules over the whole workspace, against their debt (the crate's doc says which
//! rules and why). `HOUSE_RULES_WRITE_DEBT=1` rewrites the debt file instead of checking it.

use contactlab_house::rules::{debt_toml, parse_debt, House, Ratchet, DEBT_FILE};
use contactlab_house::workspace;

#[test]
fn the_house_rules_hold_or_are_listed_as_debt() {
    let root = workspace::root();
    let house = House::read(&root);
    let offenders = house.offenders();
    let summary = house.summary(&offenders);
    println!("{summary}");
    let path = root.join(DEBT_FILE);
    if std::env::var("HOUSE_RULES_WRITE_DEBT").is_ok_and(|v| v == "1") {
        std::fs::write(&path, debt_toml(&offenders)).unwrap();
        println!("wrote {DEBT_FILE}: {} entries", offenders.len());
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{DEBT_FILE}: {e}"));
    let debt = parse_debt(&text).unwrap_or_else(|e| panic!("{DEBT_FILE}: {e}"));
    let ratchet = Ratchet::compare(&offenders, &debt);
    assert!(ratchet.holds(), "{}\n{summary}", ratchet.message());
}
