//! Styles, and their monochrome fallback under NO_COLOR (every state also has a text
//! marker, so nothing depends on colour alone).
//!
//! Colours are chosen for contrast on the terminals people use: with no `theme` set, only
//! red and magenta (readable on Solarized dark and light and on xterm's black and white
//! alike) plus bold, underline and reverse; `theme = "dark"` adds green, yellow and cyan,
//! `theme = "light"` blue. Nothing is drawn in palette 8 ("bright black"), which is the
//! background itself on Solarized dark. The tests below check every style's contrast
//! against those palettes.

use ratatui::style::{Color, Modifier, Style};

use crate::config::Palette;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    color: bool,
    palette: Palette,
}

impl Theme {
    pub(crate) fn new(color: bool, palette: Palette) -> Theme {
        Theme { color, palette }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    /// The colour of one role on each palette: (any, dark, light); `None`: the
    /// terminal's own foreground.
    fn pick(&self, any: Option<Color>, dark: Color, light: Color) -> Style {
        match self.palette {
            Palette::Any => any.map_or_else(Style::default, |c| self.fg(c)),
            Palette::Dark => self.fg(dark),
            Palette::Light => self.fg(light),
        }
    }

    /// Tabs, key names, headings, borders.
    fn accent(&self) -> Style {
        self.pick(Some(Color::Magenta), Color::Cyan, Color::Blue)
    }

    pub(crate) fn tab(&self) -> Style {
        Style::default()
    }
    pub(crate) fn tab_active(&self) -> Style {
        self.accent()
            .add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }
    /// Labels and secondary text: the terminal's own foreground, which every theme
    /// makes readable (never a grey that vanishes into the background).
    pub(crate) fn dim(&self) -> Style {
        Style::default()
    }
    pub(crate) fn key(&self) -> Style {
        self.accent().add_modifier(Modifier::BOLD)
    }
    pub(crate) fn header(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }
    pub(crate) fn heading(&self) -> Style {
        self.accent().add_modifier(Modifier::BOLD)
    }
    pub(crate) fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
    pub(crate) fn mine(&self) -> Style {
        self.pick(None, Color::Green, Color::Blue)
            .add_modifier(Modifier::BOLD)
    }
    pub(crate) fn held(&self) -> Style {
        self.pick(None, Color::Yellow, Color::Magenta)
    }
    pub(crate) fn expired(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn late(&self) -> Style {
        self.fg(Color::Red)
    }
    pub(crate) fn alert(&self, expired: bool) -> Style {
        if self.color {
            // White on red, black on yellow: the pairs that read on every palette.
            let (bg, fg) = if expired {
                (Color::Red, Color::White)
            } else {
                (Color::Yellow, Color::Black)
            };
            Style::default().bg(bg).fg(fg).add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }
    /// The waiting-for-the-database line.
    pub(crate) fn waiting(&self) -> Style {
        if self.color {
            Style::default()
                .bg(Color::Blue)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }
    pub(crate) fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn info(&self) -> Style {
        self.mine()
    }
    pub(crate) fn border(&self) -> Style {
        self.accent()
    }

    /// Every style, named (the contrast tests walk them).
    #[cfg(test)]
    pub(crate) fn all(&self) -> Vec<(&'static str, Style)> {
        vec![
            ("tab", self.tab()),
            ("tab_active", self.tab_active()),
            ("dim", self.dim()),
            ("key", self.key()),
            ("header", self.header()),
            ("heading", self.heading()),
            ("selected", self.selected()),
            ("mine", self.mine()),
            ("held", self.held()),
            ("expired", self.expired()),
            ("late", self.late()),
            ("alert", self.alert(true)),
            ("warning", self.alert(false)),
            ("waiting", self.waiting()),
            ("error", self.error()),
            ("info", self.info()),
            ("border", self.border()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A terminal's colours: default foreground, background, and the 16-colour palette.
    struct Scheme {
        name: &'static str,
        fg: u32,
        bg: u32,
        ansi: [u32; 16],
    }

    const SOLARIZED: [u32; 16] = [
        0x073642, 0xdc322f, 0x859900, 0xb58900, 0x268bd2, 0xd33682, 0x2aa198, 0xeee8d5, 0x002b36,
        0xcb4b16, 0x586e75, 0x657b83, 0x839496, 0x6c71c4, 0x93a1a1, 0xfdf6e3,
    ];
    const XTERM: [u32; 16] = [
        0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5, 0x7f7f7f,
        0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
    ];
    const SOLARIZED_DARK: Scheme = Scheme {
        name: "Solarized dark",
        fg: 0x839496,
        bg: 0x002b36,
        ansi: SOLARIZED,
    };
    const SOLARIZED_LIGHT: Scheme = Scheme {
        name: "Solarized light",
        fg: 0x657b83,
        bg: 0xfdf6e3,
        ansi: SOLARIZED,
    };
    const XTERM_DARK: Scheme = Scheme {
        name: "xterm on black",
        fg: 0xffffff,
        bg: 0x000000,
        ansi: XTERM,
    };
    const XTERM_LIGHT: Scheme = Scheme {
        name: "xterm on white (its default)",
        fg: 0x000000,
        bg: 0xffffff,
        ansi: XTERM,
    };

    fn rgb(scheme: &Scheme, c: Option<Color>, default: u32) -> u32 {
        let i = match c {
            None | Some(Color::Reset) => return default,
            Some(Color::Rgb(r, g, b)) => return u32::from_be_bytes([0, r, g, b]),
            Some(Color::Black) => 0,
            Some(Color::Red) => 1,
            Some(Color::Green) => 2,
            Some(Color::Yellow) => 3,
            Some(Color::Blue) => 4,
            Some(Color::Magenta) => 5,
            Some(Color::Cyan) => 6,
            Some(Color::Gray) => 7,
            Some(Color::DarkGray) => 8,
            Some(Color::LightRed) => 9,
            Some(Color::LightGreen) => 10,
            Some(Color::LightYellow) => 11,
            Some(Color::LightBlue) => 12,
            Some(Color::LightMagenta) => 13,
            Some(Color::LightCyan) => 14,
            Some(Color::White) => 15,
            Some(Color::Indexed(i)) if i < 16 => i as usize,
            Some(other) => panic!("{other:?} is not a palette colour"),
        };
        scheme.ansi[i]
    }

    /// WCAG relative luminance and contrast ratio.
    fn luminance(c: u32) -> f64 {
        let ch = |shift: u32| {
            let v = f64::from((c >> shift) & 0xff) / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * ch(16) + 0.7152 * ch(8) + 0.0722 * ch(0)
    }

    fn contrast(a: u32, b: u32) -> f64 {
        let (la, lb) = (luminance(a), luminance(b));
        (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
    }

    /// The text and background colours a style puts on screen.
    fn on_screen(scheme: &Scheme, s: Style) -> (u32, u32) {
        let fg = rgb(scheme, s.fg, scheme.fg);
        let bg = rgb(scheme, s.bg, scheme.bg);
        if s.add_modifier.contains(Modifier::REVERSED) {
            (bg, fg)
        } else {
            (fg, bg)
        }
    }

    fn check(palette: Palette, schemes: &[&Scheme]) {
        let theme = Theme::new(true, palette);
        for (name, style) in theme.all() {
            assert_ne!(style.fg, Some(Color::DarkGray), "{name} uses palette 8");
            assert!(
                !style.add_modifier.contains(Modifier::DIM),
                "{name} is dimmed"
            );
            for scheme in schemes {
                let (fg, bg) = on_screen(scheme, style);
                let ratio = contrast(fg, bg);
                assert!(
                    ratio >= 3.0,
                    "{name} ({palette:?}) on {}: contrast {ratio:.2}:1",
                    scheme.name
                );
            }
        }
    }

    #[test]
    fn the_contrast_measure_is_wcag_s() {
        assert!((contrast(0x000000, 0xffffff) - 21.0).abs() < 0.01);
        // Palette 8 on Solarized dark is the background itself.
        assert!(contrast(SOLARIZED[8], SOLARIZED_DARK.bg) < 1.01);
        // Yellow on xterm's white: the complaint that started this.
        assert!(contrast(XTERM[3], 0xffffff) < 2.0);
    }

    #[test]
    fn the_default_theme_is_readable_on_dark_and_light_terminals() {
        check(
            Palette::Any,
            &[&SOLARIZED_DARK, &SOLARIZED_LIGHT, &XTERM_DARK, &XTERM_LIGHT],
        );
    }

    #[test]
    fn the_dark_theme_is_readable_on_dark_terminals() {
        check(Palette::Dark, &[&SOLARIZED_DARK, &XTERM_DARK]);
    }

    #[test]
    fn the_light_theme_is_readable_on_light_terminals() {
        check(Palette::Light, &[&SOLARIZED_LIGHT, &XTERM_LIGHT]);
    }

    #[test]
    fn no_color_means_no_colour() {
        for p in [Palette::Any, Palette::Dark, Palette::Light] {
            for (name, style) in Theme::new(false, p).all() {
                assert_eq!((style.fg, style.bg), (None, None), "{name}");
            }
        }
    }
}
