//! Tokens of an events expression, each with its 1-based character position.
//!
//! The lexer stops at the first character it cannot read and hands what it read so far,
//! plus that failure, to the parser. The parser reports the failure only when it gets
//! there, so an earlier grammar error wins, and a stray character is reported with what
//! the grammar expected at that point.

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// Event names, keywords (AND, NOT, BETWEEN, …) and day names, as written.
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

/// Longest piece of user input quoted back in an error message, in characters.
const QUOTE_LIMIT: usize = 40;

/// `text` in double quotes, cut short when long (error messages stay readable).
pub fn quote_found(text: &str) -> String {
    if text.chars().count() > QUOTE_LIMIT {
        let head: String = text.chars().take(QUOTE_LIMIT).collect();
        format!("\"{head}…\"")
    } else {
        format!("\"{text}\"")
    }
}

impl Token {
    /// How an error message names the token.
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(s) => quote_found(s),
            Token::Str(s) => format!("string {}", quote_found(s)),
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

/// Where the lexer stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub position: usize,
    /// `None`: any character would do here, so the parser says what it expected.
    pub expected: Option<&'static str>,
    pub found: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lexed {
    pub tokens: Vec<Spanned>,
    /// Set when the lexer stopped before the end of the input.
    pub error: Option<LexError>,
}

pub fn tokenize(input: &str) -> Lexed {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match read_token(&chars, i) {
            Ok(None) => i += 1,
            Ok(Some((token, width))) => {
                tokens.push(Spanned {
                    token,
                    position: i + 1,
                });
                i += width;
            }
            Err(error) => {
                return Lexed {
                    tokens,
                    error: Some(error),
                };
            }
        }
    }
    Lexed {
        tokens,
        error: None,
    }
}

/// The token starting at `chars[i]` and its width in characters; `None` for whitespace.
fn read_token(chars: &[char], i: usize) -> Result<Option<(Token, usize)>, LexError> {
    let position = i + 1;
    let next = chars.get(i + 1).copied();
    let token = match chars[i] {
        c if c.is_whitespace() => return Ok(None),
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
        '"' => read_string(chars, i)?,
        c if c.is_ascii_digit() || (c == '-' && next.is_some_and(|n| n.is_ascii_digit())) => {
            let mut j = i + 1;
            while chars
                .get(j)
                .is_some_and(|d| d.is_ascii_digit() || *d == '.')
            {
                j += 1;
            }
            let text: String = chars[i..j].iter().collect();
            // Hundreds of digits overflow to infinity, which has no literal to print back.
            match text.parse::<f64>() {
                Ok(n) if n.is_finite() => (Token::Number(n), j - i),
                _ => {
                    return Err(LexError {
                        position,
                        expected: Some("a number"),
                        found: quote_found(&text),
                    });
                }
            }
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
            return Err(LexError {
                position,
                expected: None,
                found: quote_found(&other.to_string()),
            });
        }
    };
    Ok(Some(token))
}

/// A string literal starting at the quote `chars[i]`; `\"` and `\\` are its escapes.
fn read_string(chars: &[char], i: usize) -> Result<(Token, usize), LexError> {
    let mut value = String::new();
    let mut j = i + 1;
    loop {
        match chars.get(j) {
            None => {
                return Err(LexError {
                    position: i + 1,
                    expected: Some("a closing '\"' for this string"),
                    found: "end of expression".into(),
                });
            }
            Some('\\') => {
                match chars.get(j + 1) {
                    Some(escaped @ ('"' | '\\')) => value.push(*escaped),
                    _ => {
                        return Err(LexError {
                            position: j + 1,
                            expected: Some("\\\" or \\\\ (a backslash escapes only these)"),
                            found: "\"\\\"".into(),
                        });
                    }
                }
                j += 2;
            }
            Some('"') => return Ok((Token::Str(value), j + 1 - i)),
            Some(other) => {
                value.push(*other);
                j += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_positions() {
        let lexed = tokenize(r#"Speed>=10 && Property("a\"b") != "x" <> -2.5"#);
        assert_eq!(lexed.error, None);
        let t = lexed.tokens;
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
                Token::Ne,
                Token::Number(-2.5),
            ]
        );
        assert_eq!(t[1].position, 6);
        assert_eq!(t[3].position, 11);
    }

    #[test]
    fn positions_count_characters_not_bytes() {
        let lexed = tokenize("InGeofence(\"Zürich ✓\") OR CheckIn");
        assert_eq!(lexed.tokens[2].token, Token::Str("Zürich ✓".into()));
        assert_eq!(lexed.tokens[4].position, 24);
    }

    #[test]
    fn stops_at_the_first_unreadable_character() {
        let lexed = tokenize("CheckIn # x");
        assert_eq!(lexed.tokens.len(), 1);
        let e = lexed.error.unwrap();
        assert_eq!(
            (e.position, e.expected, e.found.as_str()),
            (9, None, "\"#\"")
        );
        let e = tokenize("InGeofence(\"open").error.unwrap();
        assert_eq!(e.position, 12);
        let e = tokenize(r#"Property("a\n")"#).error.unwrap();
        assert_eq!(e.position, 12);
        let e = tokenize("Speed > 1.2.3").error.unwrap();
        assert_eq!((e.position, e.found.as_str()), (9, "\"1.2.3\""));
        let e = tokenize(&format!("Speed > {}", "9".repeat(400)))
            .error
            .unwrap();
        assert_eq!(e.expected, Some("a number"));
        assert!(e.found.ends_with("…\""), "{}", e.found);
        let e = tokenize("CheckIn & FreeText").error.unwrap();
        assert_eq!((e.position, e.found.as_str()), (9, "\"&\""));
    }
}
