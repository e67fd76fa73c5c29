//! Styles, and their monochrome fallback under NO_COLOR (every state also has a text
//! marker, so nothing depends on colour alone).

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    pub fn new(color: bool) -> Theme {
        Theme { color }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    pub fn tab(&self) -> Style {
        Style::default()
    }
    pub fn tab_active(&self) -> Style {
        self.fg(Color::Cyan)
            .add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }
    pub fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }
    pub fn key(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn header(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }
    pub fn heading(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
    pub fn mine(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn held(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn expired(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn late(&self) -> Style {
        self.fg(Color::Red)
    }
    pub fn alert(&self, expired: bool) -> Style {
        if self.color {
            let bg = if expired { Color::Red } else { Color::Yellow };
            Style::default()
                .bg(bg)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }
    /// The waiting-for-the-database line.
    pub fn waiting(&self) -> Style {
        if self.color {
            Style::default()
                .bg(Color::Blue)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }
    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn info(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn border(&self) -> Style {
        self.fg(Color::Cyan)
    }
}
