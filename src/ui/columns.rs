//! Table columns that fit the terminal: the title gets the remaining width first; on a
//! narrow screen the other columns are abbreviated, then dropped one by one, and text
//! that does not fit ends in `…`.

use ratatui::layout::Constraint;
use ratatui::text::Span;

/// A column of a list table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Col {
    /// Width at full size and abbreviated; 0 for the title, which fills what is left.
    pub full: u16,
    pub compact: u16,
    /// When the column goes on a narrow screen: lower ranks first; `None`: never.
    pub drop: Option<u8>,
}

impl Col {
    pub(super) const fn new(full: u16, compact: u16, drop: Option<u8>) -> Col {
        Col {
            full,
            compact,
            drop,
        }
    }

    /// The title column.
    pub(super) const TITLE: Col = Col::new(0, 0, None);
}

/// How a table is laid out at one width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Plan {
    /// Each column's width; `None` when the column is left out.
    pub widths: Vec<Option<u16>>,
    /// Whether the columns show their abbreviated text (`bob 24m`).
    pub compact: bool,
    /// The title's width.
    pub title: u16,
}

impl Plan {
    /// The constraints of the columns shown.
    pub(super) fn constraints(&self) -> Vec<Constraint> {
        self.widths
            .iter()
            .flatten()
            .map(|w| Constraint::Length(*w))
            .collect()
    }

    /// Keeps the cells of the columns shown.
    pub(super) fn pick<T>(&self, cells: Vec<T>) -> Vec<T> {
        cells
            .into_iter()
            .zip(&self.widths)
            .filter_map(|(c, w)| w.map(|_| c))
            .collect()
    }

    /// The width of column `i`, 0 when it is left out.
    pub(super) fn width(&self, i: usize) -> usize {
        self.widths.get(i).copied().flatten().unwrap_or(0) as usize
    }
}

/// Lays out `cols` in `total` columns (one space between columns), giving the title at
/// least `title_want` if abbreviating and dropping columns can; otherwise as much as the
/// last step leaves.
pub(super) fn plan(total: u16, cols: &[Col], title_want: u16) -> Plan {
    let mut ranks: Vec<u8> = cols.iter().filter_map(|c| c.drop).collect();
    ranks.sort_unstable();
    ranks.dedup();
    // Step 0: full widths; step 1: abbreviated; step 1 + k: the k lowest ranks dropped.
    let steps = 2 + ranks.len();
    let mut last = None;
    for step in 0..steps {
        let compact = step > 0;
        let gone = &ranks[..step.saturating_sub(1)];
        let mut widths: Vec<Option<u16>> = cols
            .iter()
            .map(|c| match c.drop {
                Some(r) if gone.contains(&r) => None,
                _ if compact => Some(c.compact),
                _ => Some(c.full),
            })
            .collect();
        let shown = widths.iter().flatten().count() as u16;
        let fixed: u16 = widths.iter().flatten().sum();
        let title = total.saturating_sub(fixed + shown.saturating_sub(1));
        if let Some(i) = cols.iter().position(|c| *c == Col::TITLE) {
            widths[i] = Some(title);
        }
        let p = Plan {
            widths,
            compact,
            title,
        };
        if title >= title_want {
            return p;
        }
        last = Some(p);
    }
    last.unwrap_or(Plan {
        widths: Vec::new(),
        compact: true,
        title: 0,
    })
}

/// `s` cut to `width` terminal cells, ending in `…` when cut (wide characters count two).
pub(super) fn fit(s: &str, width: usize) -> String {
    if Span::raw(s).width() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    let mut buf = [0u8; 4];
    for c in s.chars() {
        let w = Span::raw(&*c.encode_utf8(&mut buf)).width();
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_with_an_ellipsis_and_counts_wide_characters() {
        assert_eq!(fit("printer", 10), "printer");
        assert_eq!(fit("printer jam", 8), "printer…");
        assert_eq!(fit("日本語のテキスト", 7), "日本語…");
        assert_eq!(fit("abc", 0), "");
    }

    #[test]
    fn the_title_gets_the_width_first() {
        let cols = [
            Col::new(1, 1, None),
            Col::new(6, 4, Some(1)),
            Col::TITLE,
            Col::new(22, 14, None),
        ];
        // Wide: everything at full size.
        let p = plan(100, &cols, 40);
        assert!(!p.compact);
        assert_eq!(p.title, 100 - 1 - 6 - 22 - 3);
        // Narrower: abbreviated first ...
        let p = plan(60, &cols, 30);
        assert!(p.compact);
        assert_eq!(p.widths[1], Some(4));
        assert_eq!(p.title, 60 - 1 - 4 - 14 - 3);
        // ... then the column of rank 1 goes.
        let p = plan(45, &cols, 28);
        assert_eq!(p.widths[1], None);
        assert_eq!(p.title, 45 - 1 - 14 - 2);
        assert_eq!(p.constraints().len(), 3);
        assert_eq!(p.pick(vec!["a", "b", "c", "d"]), vec!["a", "c", "d"]);
    }
}
