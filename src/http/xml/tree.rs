//! XML input, first half: the body read (quick-xml's namespace-aware reader) into a small
//! element tree, bounded in depth and size whatever the body limit. `input.rs` deserialises
//! the typed record from the tree.

use quick_xml::NsReader;
use quick_xml::events::{BytesStart, Event};

/// Deepest element nesting accepted (the records need about 6).
pub const MAX_DEPTH: usize = 64;
/// Most elements one body may have: bounds the tree's memory whatever the body limit.
pub const MAX_ELEMENTS: usize = 100_000;

/// One element: its local name, its text (for a leaf), its children, and `xsi:nil`.
#[derive(Debug, Default)]
pub struct Element {
    pub(super) name: String,
    pub(super) text: String,
    pub(super) children: Vec<Element>,
    pub(super) nil: bool,
}

impl Element {
    /// No children and no text: an empty wrapper, or an empty value.
    pub(super) fn is_empty(&self) -> bool {
        self.children.is_empty() && self.text.is_empty()
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum TreeError {
    /// Not well-formed XML (or not one root element).
    Malformed(String),
    /// Nested too deeply, or too many elements.
    TooLarge(String),
}

fn malformed(e: impl std::fmt::Display) -> TreeError {
    TreeError::Malformed(e.to_string())
}

/// A piece of character data; text is trimmed where it meets markup, CDATA is kept as is.
struct Piece {
    cdata: bool,
    content: String,
}

struct Open {
    element: Element,
    pieces: Vec<Piece>,
}

impl Open {
    fn new(reader: &NsReader<&[u8]>, start: &BytesStart) -> Result<Open, TreeError> {
        for attribute in start.attributes() {
            attribute.map_err(malformed)?;
        }
        let name = std::str::from_utf8(start.local_name().as_ref())
            .map_err(malformed)?
            .to_string();
        Ok(Open {
            element: Element {
                name,
                nil: start.attributes().has_nil(reader),
                ..Element::default()
            },
            pieces: Vec::new(),
        })
    }

    fn close(mut self) -> Element {
        let xml_space = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
        let count = self.pieces.len();
        let mut text = String::new();
        for (i, piece) in self.pieces.iter().enumerate() {
            let mut content = piece.content.as_str();
            if !piece.cdata {
                if i == 0 || !self.pieces[i - 1].cdata {
                    content = content.trim_start_matches(xml_space);
                }
                if i + 1 == count || !self.pieces[i + 1].cdata {
                    content = content.trim_end_matches(xml_space);
                }
            }
            text.push_str(content);
        }
        self.element.text = text;
        self.element
    }
}

/// Reads a whole document into its root element.
pub fn parse(xml: &str) -> Result<Element, TreeError> {
    let xml = xml.strip_prefix('\u{feff}').unwrap_or(xml);
    let mut reader = NsReader::from_str(xml);
    let mut stack: Vec<Open> = Vec::new();
    let mut root: Option<Element> = None;
    let mut elements = 0usize;
    loop {
        let event = reader.read_event().map_err(malformed)?;
        let closed = match event {
            Event::Start(_) | Event::Empty(_) if elements >= MAX_ELEMENTS => {
                return Err(TreeError::TooLarge(format!(
                    "the XML body has more than {MAX_ELEMENTS} elements"
                )));
            }
            Event::Start(start) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(TreeError::TooLarge(format!(
                        "the XML body nests elements more than {MAX_DEPTH} deep"
                    )));
                }
                elements += 1;
                stack.push(Open::new(&reader, &start)?);
                None
            }
            Event::Empty(start) => {
                elements += 1;
                Some(Open::new(&reader, &start)?.close())
            }
            // The reader has checked that the end tag matches its start.
            Event::End(_) => stack.pop().map(Open::close),
            Event::Text(text) => {
                let content = text.unescape().map_err(malformed)?.into_owned();
                add_text(&mut stack, false, content)?;
                None
            }
            Event::CData(cdata) => {
                let content = cdata.decode().map_err(malformed)?.into_owned();
                add_text(&mut stack, true, content)?;
                None
            }
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => None,
        };
        if let Some(element) = closed {
            match stack.last_mut() {
                Some(parent) => parent.element.children.push(element),
                None if root.is_some() => {
                    return Err(malformed("more than one root element"));
                }
                None => root = Some(element),
            }
        }
    }
    if let Some(open) = stack.last() {
        return Err(malformed(format!(
            "unexpected end of the body: <{}> is not closed",
            open.element.name
        )));
    }
    root.ok_or_else(|| malformed("there is no root element"))
}

fn add_text(stack: &mut [Open], cdata: bool, content: String) -> Result<(), TreeError> {
    match stack.last_mut() {
        Some(open) => open.pieces.push(Piece { cdata, content }),
        None if content.trim().is_empty() => {}
        None => return Err(malformed("text outside the root element")),
    }
    Ok(())
}
