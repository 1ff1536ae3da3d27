import CCastscopeZlib

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where ClickHouse's HTTP interface is: `http://[user[:password]@]host[:port][/][?database=db]`.
/// User and password come from the URL or else `CLICKHOUSE_USER` / `CLICKHOUSE_PASSWORD`; the
/// description never shows the password.
public struct ClickHouseEndpoint: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var database: String?
    public var user: String?
    public var password: String?

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public init(url: String, environment: (String) -> String? = { name in getenv(name).map { String(cString: $0) } }) throws {
        var rest = Substring(url)
        guard rest.hasPrefix("http://") else {
            throw Invalid(description: "--clickhouse: only http:// URLs are supported (ClickHouse's HTTP interface), got '\(Self.redact(url))'")
        }
        rest = rest.dropFirst(7)
        var query = ""
        if let q = rest.firstIndex(of: "?") { query = String(rest[rest.index(after: q)...]); rest = rest[..<q] }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") {
            let cred = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = cred.firstIndex(of: ":") {
                user = Self.percentDecode(cred[..<colon])
                password = Self.percentDecode(cred[cred.index(after: colon)...])
            } else {
                user = Self.percentDecode(cred)
            }
        }
        if rest.hasPrefix("[") , let close = rest.firstIndex(of: "]") {
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...]
            port = rest.hasPrefix(":") ? Int(rest.dropFirst()) ?? -1 : 8123
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            port = Int(rest[rest.index(after: colon)...]) ?? -1
        } else {
            host = String(rest)
            port = 8123
        }
        guard !host.isEmpty, (1...65535).contains(port) else {
            throw Invalid(description: "--clickhouse: cannot read host and port from '\(Self.redact(url))'")
        }
        for part in query.split(separator: "&") {
            let kv = part.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            let v = Self.percentDecode(kv[1])
            switch kv[0] {
            case "database": database = v
            case "user": user = v
            case "password": password = v
            default: break
            }
        }
        if user == nil { user = environment("CLICKHOUSE_USER").flatMap { $0.isEmpty ? nil : $0 } }
        if password == nil { password = environment("CLICKHOUSE_PASSWORD") }
    }

    public var description: String {
        "http://\(user.map { "\($0)@" } ?? "")\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database.map { "?database=\($0)" } ?? "")"
    }

    /// The URL with any password replaced by `***` (for error messages).
    public static func redact(_ url: String) -> String {
        var out = url
        if let scheme = out.firstRange(of: "://"), let at = out[scheme.upperBound...].lastIndex(of: "@") {
            let cred = out[scheme.upperBound..<at]
            if let colon = cred.firstIndex(of: ":") { out.replaceSubrange(out.index(after: colon)..<at, with: "***") }
        }
        if let p = out.firstRange(of: "password=") {
            let end = out[p.upperBound...].firstIndex(of: "&") ?? out.endIndex
            out.replaceSubrange(p.upperBound..<end, with: "***")
        }
        return out
    }

    static func percentDecode<S: StringProtocol>(_ s: S) -> String {
        var out: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let c = it.popFirst() {
            if c == UInt8(ascii: "%"), it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) {
                out.append(v)
                it = it.dropFirst(2)
            } else {
                out.append(c == UInt8(ascii: "+") ? 0x20 : c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func percentEncode(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(b))
            default:
                let h = String(b, radix: 16, uppercase: true)
                out += "%" + (h.count == 1 ? "0" + h : h)
            }
        }
        return out
    }
}

/// What went wrong talking to ClickHouse, and whether trying again may help.
public struct ClickHouseError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// Connection refused or reset, a timeout, HTTP 429, 502–504, or a 500 whose ClickHouse
    /// error code is a transient one; not a syntax error, an unknown table, a failed login.
    public var retryable: Bool
    public var status: Int?
}

/// A small HTTP/1.1 client for ClickHouse over a POSIX socket (one connection per request,
/// `Connection: close`), with gzip request bodies through zlib. No Foundation.
public struct ClickHouseClient: Sendable {
    public var endpoint: ClickHouseEndpoint
    /// Seconds a send or receive may block.
    public var timeoutSeconds = 60

    public init(endpoint: ClickHouseEndpoint) { self.endpoint = endpoint }

    /// Runs one statement; returns the response body (e.g. `TabSeparated` rows).
    @discardableResult
    public func execute(_ sql: String, settings: [(String, String)] = []) throws -> String {
        let body = Array(sql.utf8)
        let r = try request(query: nil, settings: settings, body: body, gzip: false)
        return String(decoding: r, as: UTF8.self)
    }

    /// `INSERT INTO table FORMAT JSONEachRow` with `rows` (JSONEachRow bytes) as a gzip body.
    /// For a `Distributed` table the insert is synchronous (`insert_distributed_sync`), so the
    /// answer means every shard has the rows.
    public func insert(table: String, rows: [UInt8]) throws {
        try insert(table: table, gzipped: try Gzip.compress(rows))
    }

    /// The same with the body already compressed (batches held while `analyze` could still
    /// read the bundle again, `BatchSender.hold`).
    public func insert(table: String, gzipped compressed: [UInt8]) throws {
        var settings: [(String, String)] = []
        settings.append(("insert_distributed_sync", "1"))
        _ = try request(query: "INSERT INTO \(table) FORMAT JSONEachRow", settings: settings, body: compressed, gzip: true)
    }

    func request(query: String?, settings: [(String, String)], body: [UInt8], gzip: Bool) throws -> [UInt8] {
        var target = "/?"
        var params: [(String, String)] = []
        if let query { params.append(("query", query)) }
        if let db = endpoint.database { params.append(("database", db)) }
        params += settings
        target += params.map { "\($0.0)=\(ClickHouseEndpoint.percentEncode($0.1))" }.joined(separator: "&")
        var head = "POST \(target) HTTP/1.1\r\nHost: \(endpoint.host):\(endpoint.port)\r\nConnection: close\r\n"
        head += "Content-Length: \(body.count)\r\nContent-Type: text/plain; charset=UTF-8\r\n"
        if gzip { head += "Content-Encoding: gzip\r\n" }
        if let user = endpoint.user {
            head += "Authorization: Basic \(Base64.encode(Array("\(user):\(endpoint.password ?? "")".utf8)))\r\n"
        }
        head += "\r\n"
        let fd = try connect()
        defer { close(fd) }
        try send(fd, Array(head.utf8))
        try send(fd, body)
        let response = try receiveAll(fd)
        return try parse(response)
    }

    private func failure(_ text: String, retryable: Bool, status: Int? = nil) -> ClickHouseError {
        ClickHouseError(description: "ClickHouse at \(endpoint): \(text)", retryable: retryable, status: status)
    }

    private func connect() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var res: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &res)
        guard rc == 0, let first = res else {
            throw failure("cannot resolve \(endpoint.host): \(String(cString: gai_strerror(rc)))", retryable: true)
        }
        defer { freeaddrinfo(res) }
        var lastErrno: Int32 = 0
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), a.pointee.ai_protocol)
            if fd >= 0 {
                var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                if Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { return fd }
                lastErrno = errno
                close(fd)
            } else {
                lastErrno = errno
            }
            ai = a.pointee.ai_next
        }
        throw failure("cannot connect: \(timedOut(lastErrno) ?? String(cString: strerror(lastErrno)))", retryable: true)
    }

    /// A socket timeout said as one (`SO_RCVTIMEO`/`SO_SNDTIMEO` end a call with EAGAIN, a
    /// connect with EINPROGRESS: "Resource temporarily unavailable" said nothing), or nil.
    private func timedOut(_ code: Int32) -> String? {
        guard code == EAGAIN || code == EWOULDBLOCK || code == EINPROGRESS || code == ETIMEDOUT else { return nil }
        return "no answer within \(timeoutSeconds) s (--clickhouse-timeout)"
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("sending the request: \(timedOut(errno) ?? String(cString: strerror(errno)))", retryable: true)
            }
            off += n
        }
    }

    private func receiveAll(_ fd: Int32) throws -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("reading the answer: \(timedOut(errno) ?? String(cString: strerror(errno)))", retryable: true)
            }
            out.append(contentsOf: buf[0..<n])
        }
        return out
    }

    /// Status line, headers, then the body (chunked or not).
    private func parse(_ r: [UInt8]) throws -> [UInt8] {
        guard let end = find(r, [13, 10, 13, 10], from: 0) else {
            throw failure("the connection closed before a complete answer", retryable: true)
        }
        let head = String(decoding: r[0..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw failure("not an HTTP answer: \(lines.first ?? "")", retryable: true)
        }
        var chunked = false
        for l in lines.dropFirst() {
            let lower = l.lowercased()
            if lower.hasPrefix("transfer-encoding:") && lower.contains("chunked") { chunked = true }
        }
        var body = Array(r[(end + 4)...])
        if chunked { body = dechunk(body) }
        guard (200..<300).contains(status) else {
            let text = String(decoding: body.prefix(600), as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            throw failure("HTTP \(status): \(text)", retryable: Self.retryable(status: status, body: text), status: status)
        }
        return body
    }

    /// ClickHouse error codes that mean "try again": timeouts, network, memory, too many parts
    /// or queries, a shard unreachable, the server shutting down.
    static let transientCodes: Set<Int> = [159, 164, 202, 203, 209, 210, 241, 242, 252, 279, 285, 319, 394, 425, 439]

    static func retryable(status: Int, body: String) -> Bool {
        if status == 429 || status == 502 || status == 503 || status == 504 || status == 408 { return true }
        guard status >= 500 else { return false }
        // "Code: 60, e.displayText() = DB::Exception: …" (18.16) or "Code: 60. DB::Exception: …".
        if let r = body.firstRange(of: "Code: ") {
            let digits = body[r.upperBound...].prefix(while: { $0.isNumber })
            if let code = Int(digits) { return transientCodes.contains(code) }
        }
        return true
    }

    private func dechunk(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            guard let eol = find(b, [13, 10], from: i) else { break }
            let sizeText = String(decoding: b[i..<eol], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(), radix: 16), size > 0 else { break }
            let start = eol + 2
            let stop = min(b.count, start + size)
            out.append(contentsOf: b[start..<stop])
            i = stop + 2
        }
        return out
    }

    private func find(_ hay: [UInt8], _ needle: [UInt8], from: Int) -> Int? {
        guard hay.count >= needle.count else { return nil }
        var i = from
        while i + needle.count <= hay.count {
            if hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}

extension Substring {
    func trimmingCharacters() -> String { String(self).trimmingSpaces() }
}

/// gzip compression through zlib (level 1: the bodies are JSON, which compresses well fast).
public enum Gzip {
    public static func compress(_ input: [UInt8], level: Int32 = 1) throws -> [UInt8] {
        try input.withUnsafeBytes { try compress($0, level: level) }
    }

    public static func compress(_ inp: UnsafeRawBufferPointer, level: Int32 = 1) throws -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { deflateEnd(stream); stream.deinitialize(count: 1); stream.deallocate() }
        guard ccastscope_deflateInit2(stream, level, 16 + MAX_WBITS) == Z_OK else {
            throw ClickHouseError(description: "gzip: deflateInit2 failed", retryable: false)
        }
        // Not zero-filled first: only the pages deflate writes are touched (JSON shrinks to a
        // fraction of the bound).
        var produced = -1
        let out = [UInt8](unsafeUninitializedCapacity: Int(deflateBound(stream, uLong(inp.count))) + 64) { o, count in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: inp.bindMemory(to: Bytef.self).baseAddress)
            stream.pointee.avail_in = uInt(inp.count)
            stream.pointee.next_out = o.baseAddress
            stream.pointee.avail_out = uInt(o.count)
            let rc = deflate(stream, Z_FINISH)
            produced = rc == Z_STREAM_END ? Int(stream.pointee.total_out) : -1
            count = max(0, produced)
        }
        guard produced >= 0 else { throw ClickHouseError(description: "gzip: deflate failed", retryable: false) }
        return out
    }
}

enum Base64 {
    static func encode(_ b: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            let n = min(3, b.count - i)
            let v = (UInt32(b[i]) << 16) | (n > 1 ? UInt32(b[i + 1]) << 8 : 0) | (n > 2 ? UInt32(b[i + 2]) : 0)
            out.append(table[Int((v >> 18) & 63)])
            out.append(table[Int((v >> 12) & 63)])
            out.append(n > 1 ? table[Int((v >> 6) & 63)] : UInt8(ascii: "="))
            out.append(n > 2 ? table[Int(v & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
