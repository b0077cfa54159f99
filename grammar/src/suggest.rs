//! "Did you mean ...?": the closest known word to a misspelt one.

/// The known name closest to `name`, if close enough to be a likely typo: the
/// same but for case, or at most one edit (a third of the length for long
/// names) away, an edit being an insertion, deletion, substitution or swap of
/// neighbours. Ties go to the name first in `known`'s sorted order.
pub fn closest(name: &str, known: &[String]) -> Option<String> {
    let mut known: Vec<&String> = known.iter().collect();
    known.sort();
    known.dedup();
    let len = name.chars().count();
    let limit = 1.max(len / 3);
    let mut best: Option<(usize, &String)> = None;
    for k in known {
        let d = if k.to_lowercase() == name.to_lowercase() {
            0
        } else {
            edit_distance(name, k)
        };
        if d <= limit && d < len && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k.clone())
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent swaps).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(name: &str, known: &[&str]) -> Option<String> {
        closest(
            name,
            &known.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn typos_find_their_word() {
        assert_eq!(best("sgi", &["sig", "data"]).as_deref(), Some("sig")); // swap
        assert_eq!(best("TIEL", &["TILE", "T"]).as_deref(), Some("TILE")); // swap
        assert_eq!(best("dat", &["data", "sig"]).as_deref(), Some("data")); // insertion
        assert_eq!(
            best("notfy", &["notify", "wait"]).as_deref(),
            Some("notify")
        );
        assert_eq!(best("Root", &["root"]).as_deref(), Some("root")); // case
    }

    #[test]
    fn far_or_tiny_words_find_nothing() {
        assert_eq!(best("q", &["P", "T"]), None);
        assert_eq!(best("zzz", &["sig", "data"]), None);
        assert_eq!(best("x", &[]), None);
    }

    #[test]
    fn ties_are_deterministic() {
        assert_eq!(best("ab", &["ac", "ab_"]).as_deref(), Some("ab_"));
        assert_eq!(best("ab", &["ab_", "ac"]).as_deref(), Some("ab_"));
    }

    #[test]
    fn distance() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "acb"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }
}
