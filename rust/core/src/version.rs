// SPDX-License-Identifier: GPL-2.0

//! What the core reports about itself.

/// Splits a trigger command's name from its parameters, as the trigger
/// framework does: `"!rhist:keys=pid"` gives `(true, "rhist", Some("keys=pid"))`.
pub fn split_command(text: &str) -> (bool, &str, Option<&str>) {
    let text = text.trim_start();
    let (remove, text) = match text.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    match text.find([':', ' ', '\t']) {
        Some(at) => {
            let rest = text[at + 1..].trim_start();
            (remove, &text[..at], (!rest.is_empty()).then_some(rest))
        }
        None => (remove, text, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_command_matches_trigger_framework() {
        assert_eq!(
            split_command("rhist:keys=pid"),
            (false, "rhist", Some("keys=pid"))
        );
        assert_eq!(
            split_command("!rhist:keys=pid"),
            (true, "rhist", Some("keys=pid"))
        );
        assert_eq!(split_command("  rhist"), (false, "rhist", None));
        assert_eq!(split_command("rhist: "), (false, "rhist", None));
    }
}
