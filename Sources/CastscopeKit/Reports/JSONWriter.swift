/// A small pretty-printing JSON writer (2-space indent, keys in the order written).
public struct JSONWriter {
    public private(set) var text = ""
    private var indent = 0
    private var needComma: [Bool] = [false]

    public init() {}

    public static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7F {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    private mutating func prefix(_ key: String?) {
        if needComma[needComma.count - 1] { text += "," }
        needComma[needComma.count - 1] = true
        if indent > 0 || !text.isEmpty { text += "\n" }
        text += String(repeating: "  ", count: indent)
        if let key { text += Self.quote(key) + ": " }
    }

    public mutating func open(_ key: String? = nil, array: Bool = false) {
        prefix(key)
        text += array ? "[" : "{"
        indent += 1
        needComma.append(false)
    }

    public mutating func close(array: Bool = false) {
        let had = needComma.removeLast()
        indent -= 1
        if had { text += "\n" + String(repeating: "  ", count: indent) }
        text += array ? "]" : "}"
    }

    public mutating func raw(_ key: String?, _ value: String) {
        prefix(key)
        text += value
    }

    public mutating func string(_ key: String?, _ value: String?) { raw(key, value.map(Self.quote) ?? "null") }
    public mutating func int(_ key: String?, _ value: Int?) { raw(key, value.map(String.init) ?? "null") }
    public mutating func bool(_ key: String?, _ value: Bool) { raw(key, value ? "true" : "false") }
    public mutating func number(_ key: String?, _ value: Double?, places: Int = 6) {
        raw(key, value.flatMap { $0.isFinite ? Fmt.decimal($0, places) : nil } ?? "null")  // JSON has no inf or NaN
    }
}
