//! Tokens of an events expression, each with its 1-based character position.

use super::expression::ParseError;

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Ident(String),
    Str(String),
    Number(f64),
    LParen,
    RParen,
    Comma,
    /// `&&` (the word AND is an identifier the parser recognises)
    AndSym,
    /// `||`
    OrSym,
    /// `!`
    NotSym,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Token {
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(s) => format!("\"{s}\""),
            Token::Str(s) => format!("string \"{s}\""),
            Token::Number(n) => format!("number {n}"),
            Token::LParen => "\"(\"".into(),
            Token::RParen => "\")\"".into(),
            Token::Comma => "\",\"".into(),
            Token::AndSym => "\"&&\"".into(),
            Token::OrSym => "\"||\"".into(),
            Token::NotSym => "\"!\"".into(),
            Token::Lt => "\"<\"".into(),
            Token::Le => "\"<=\"".into(),
            Token::Gt => "\">\"".into(),
            Token::Ge => "\">=\"".into(),
            Token::Eq => "\"=\"".into(),
            Token::Ne => "\"!=\"".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Spanned {
    pub token: Token,
    /// 1-based character position of the token's first character.
    pub position: usize,
}

pub fn tokenize(input: &str) -> Result<Vec<Spanned>, ParseError> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let position = i + 1;
        let next = chars.get(i + 1).copied();
        let (token, width) = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '(' => (Token::LParen, 1),
            ')' => (Token::RParen, 1),
            ',' => (Token::Comma, 1),
            '&' if next == Some('&') => (Token::AndSym, 2),
            '|' if next == Some('|') => (Token::OrSym, 2),
            '!' if next == Some('=') => (Token::Ne, 2),
            '!' => (Token::NotSym, 1),
            '<' if next == Some('=') => (Token::Le, 2),
            '<' if next == Some('>') => (Token::Ne, 2),
            '<' => (Token::Lt, 1),
            '>' if next == Some('=') => (Token::Ge, 2),
            '>' => (Token::Gt, 1),
            '=' if next == Some('=') => (Token::Eq, 2),
            '=' => (Token::Eq, 1),
            '"' => {
                let mut value = String::new();
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => {
                            return Err(ParseError::new(
                                position,
                                "a closing '\"'",
                                "end of expression",
                            ));
                        }
                        Some('\\') => {
                            match chars.get(j + 1) {
                                Some(escaped @ ('"' | '\\')) => value.push(*escaped),
                                _ => {
                                    return Err(ParseError::new(
                                        j + 1,
                                        "\\\" or \\\\ after a backslash",
                                        "\\",
                                    ));
                                }
                            }
                            j += 2;
                        }
                        Some('"') => break,
                        Some(other) => {
                            value.push(*other);
                            j += 1;
                        }
                    }
                }
                (Token::Str(value), j + 1 - i)
            }
            c if c.is_ascii_digit() || (c == '-' && next.is_some_and(|n| n.is_ascii_digit())) => {
                let mut j = i + 1;
                while chars
                    .get(j)
                    .is_some_and(|d| d.is_ascii_digit() || *d == '.')
                {
                    j += 1;
                }
                let text: String = chars[i..j].iter().collect();
                let number = text
                    .parse::<f64>()
                    .map_err(|_| ParseError::new(position, "a number", &format!("\"{text}\"")))?;
                (Token::Number(number), j - i)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut j = i + 1;
                while chars
                    .get(j)
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_')
                {
                    j += 1;
                }
                (Token::Ident(chars[i..j].iter().collect()), j - i)
            }
            other => {
                return Err(ParseError::new(
                    position,
                    "an event name, a comparison, NOT or \"(\"",
                    &format!("\"{other}\""),
                ));
            }
        };
        tokens.push(Spanned { token, position });
        i += width;
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_positions() {
        let t = tokenize(r#"Speed>=10 && Property("a\"b") != "x""#).unwrap();
        let kinds: Vec<_> = t.iter().map(|s| s.token.clone()).collect();
        assert_eq!(
            kinds,
            [
                Token::Ident("Speed".into()),
                Token::Ge,
                Token::Number(10.0),
                Token::AndSym,
                Token::Ident("Property".into()),
                Token::LParen,
                Token::Str("a\"b".into()),
                Token::RParen,
                Token::Ne,
                Token::Str("x".into()),
            ]
        );
        assert_eq!(t[1].position, 6);
        assert_eq!(t[3].position, 11);
    }

    #[test]
    fn errors_point_at_the_character() {
        let e = tokenize("CheckIn # x").unwrap_err();
        assert_eq!(e.position, 9);
        let e = tokenize("InGeofence(\"open").unwrap_err();
        assert_eq!(e.position, 12);
    }
}
