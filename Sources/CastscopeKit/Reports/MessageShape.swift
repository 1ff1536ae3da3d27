/// A message's shape: its text with every word that holds a digit (a counter, a size, an id, a
/// duration, an address) taken as a variable (below). `open socket connection (attempt 17)` and
/// `… (attempt 18)` have one shape, so a timeline folds a storm of such lines into one row
/// (`attempt 1–72000`) instead of a row per line, or one row listing every text.
///
/// A word is a run of ASCII letters, digits, `.`, `_` and `-`; every other byte stands for
/// itself. A word is variable when it holds a digit, or is eight or more hex digits (an id that
/// happens to have no decimal digit). Two messages have the same shape when their bytes outside words are the same, and
/// word by word both hold a digit or both are the same word.
enum MessageShape {
    /// Bytes that make up a word.
    private static let wordTable: [Bool] = (0..<256).map { (b: Int) -> Bool in
        if b >= 48 && b <= 57 { return true }
        if b >= 65 && b <= 90 { return true }
        if b >= 97 && b <= 122 { return true }
        return b == 0x2E || b == 0x5F || b == 0x2D
    }

    /// One piece of a message: a word (variable or not) or a single other byte.
    struct Piece {
        var range: Range<Int>
        var variable: Bool
    }

    /// The piece starting at `i` (< `u.count`).
    @inline(__always)
    static func piece(_ u: UnsafeBufferPointer<UInt8>, at i: Int) -> Piece {
        guard wordTable[Int(u[i])] else { return Piece(range: i..<(i + 1), variable: false) }
        var j = i
        var digit = false
        var hex = true
        while j < u.count, wordTable[Int(u[j])] {
            let b = u[j]
            if b &- 48 < 10 { digit = true } else if (b | 0x20) &- 97 >= 6 { hex = false }
            j += 1
        }
        // An id in hex that happens to have no digit (`fbeacdab`) is still an id.
        return Piece(range: i..<j, variable: digit || (hex && j - i >= 8))
    }

    /// Whether `a` and `b` have one shape.
    static func same(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var a = a, b = b
        return a.withUTF8 { ua in b.withUTF8 { ub in same(ua, ub) } }
    }

    static func same(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0, j = 0
        while i < a.count && j < b.count {
            let p = piece(a, at: i), q = piece(b, at: j)
            if !(p.variable && q.variable) {
                guard p.range.count == q.range.count else { return false }
                for k in 0..<p.range.count where a[p.range.lowerBound + k] != b[q.range.lowerBound + k] { return false }
            }
            i = p.range.upperBound
            j = q.range.upperBound
        }
        return i == a.count && j == b.count
    }

    /// A hash of the shape (equal shapes, equal hashes).
    static func hash(_ s: String) -> UInt64 {
        var s = s
        return s.withUTF8 { u in
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            var i = 0
            while i < u.count {
                let p = piece(u, at: i)
                if p.variable {
                    h = (h ^ 0x100) &* 0x0000_0100_0000_01B3
                } else {
                    for k in p.range { h = (h ^ UInt64(u[k])) &* 0x0000_0100_0000_01B3 }
                }
                i = p.range.upperBound
            }
            return h
        }
    }

    /// The variable words of `s`, in order.
    static func variables(_ u: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var i = 0
        while i < u.count {
            let p = piece(u, at: i)
            if p.variable { out.append(p.range) }
            i = p.range.upperBound
        }
        return out
    }

    /// The word at `r` as a string.
    static func word(_ u: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: u[r]), as: UTF8.self)
    }

    /// The value of a word that is a plain number (`-12`, `0.25`), else nil.
    static func number(_ u: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Double? {
        var i = r.lowerBound
        if i < r.upperBound && u[i] == 0x2D { i += 1 }
        var digits = 0, dot = false, afterDot = 0
        while i < r.upperBound {
            let b = u[i]
            if b &- 48 < 10 {
                if dot { afterDot += 1 } else { digits += 1 }
            } else if b == 0x2E && !dot && digits > 0 {
                dot = true
            } else {
                return nil
            }
            i += 1
        }
        guard digits > 0, !dot || afterDot > 0, digits + afterDot <= 15 else { return nil }
        return Double(word(u, r))
    }

    /// The texts of one shape seen in a run, folded: what each variable word ranged over.
    /// A run whose lines all say the same keeps that text as it is.
    struct Fold {
        /// The first text, whose shape the others share.
        let text: String
        /// Its variable words.
        private var words: [Range<Int>] = []
        /// Per variable word: whether another text had another word there, the least and the
        /// greatest as numbers (nil once a word there is not a plain number), and the word in
        /// the latest text.
        private var varies: [Bool] = []
        private var bounds: [(low: (Double, String), high: (Double, String))?] = []
        private var latest: [String] = []
        private var seenOther = false

        init(_ text: String) { self.text = text }

        /// Another line's text, of the same shape.
        mutating func see(_ other: String) {
            guard other != text else {
                if seenOther { note(other) }
                return
            }
            if !seenOther {
                seenOther = true
                var t = text
                t.withUTF8 { u in
                    words = MessageShape.variables(u)
                    varies = Array(repeating: false, count: words.count)
                    latest = words.map { MessageShape.word(u, $0) }
                    bounds = words.indices.map { k in MessageShape.number(u, words[k]).map { v in ((v, latest[k]), (v, latest[k])) } }
                }
            }
            note(other)
        }

        private mutating func note(_ other: String) {
            var o = other, t = text
            o.withUTF8 { uo in
                t.withUTF8 { ut in
                    let theirs = MessageShape.variables(uo)
                    guard theirs.count == words.count else { return }
                    for k in words.indices {
                        let a = ut[words[k]], b = uo[theirs[k]]
                        if !(a.count == b.count && a.elementsEqual(b)) { varies[k] = true }
                        if let (l, h) = bounds[k], let v = MessageShape.number(uo, theirs[k]) {
                            if v < l.0 { bounds[k]!.low = (v, MessageShape.word(uo, theirs[k])) }
                            if v > h.0 { bounds[k]!.high = (v, MessageShape.word(uo, theirs[k])) }
                        } else {
                            // Not a number (here or before): shown as its first and latest.
                            bounds[k] = nil
                            latest[k] = MessageShape.word(uo, theirs[k])
                        }
                    }
                }
            }
        }

        /// The text, each word that varied written as its range (`1–72000`) or, when it is not
        /// a number, as its first and latest (`9e3779b1…4c1a2f3e`).
        func write(into out: inout OutputBuffer) {
            guard seenOther, varies.contains(true) else {
                out.append(text)
                return
            }
            var t = text
            t.withUTF8 { u in
                var at = 0
                for k in words.indices where varies[k] {
                    out.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(u)[at..<words[k].lowerBound]))
                    if let (l, h) = bounds[k] {
                        out.append(l.1)
                        if h.1 != l.1 {
                            out.append("–")
                            out.append(h.1)
                        }
                    } else {
                        out.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(u)[words[k]]))
                        out.append("…")
                        out.append(latest[k])
                    }
                    at = words[k].upperBound
                }
                out.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(u)[at...]))
            }
        }
    }
}
