/// The first frames of the stack a death line is followed by, read for its `daemon-died`
/// finding: a Go panic's goroutine dump (the panicking function, and the program from a
/// frame's module path: `github.com/livekit/livekit-server/pkg/rtc.(*MediaTrackSubscriptions)
/// .AddSubscriber.func1()` is livekit-server's `rtc.(*MediaTrackSubscriptions).AddSubscriber`),
/// gdb's backtrace after `Program terminated with signal …` (`#0  janus_videoroom_handler
/// (data=0x0) at …`). A panic pasted bare or behind a compose prefix has no process of its
/// own: its finding said "a process crashed (panic in ?)" (livekit#1078, #3115). The JVM's
/// fatal error report (`hotspot`: `#  SIGSEGV (0xb) at pc=…, pid=1283, tid=…`, then the line
/// after `# Problematic frame:`, `# C  [libcrypto.so.1.0.0+0xea28a]`), written to the
/// daemon's stdout before `hs_err_pid….log` (jitsi-videobridge#1274, libjitsi#35).
struct DeathFrames {
    enum Kind { case go, gdb, hotspot }
    let kind: Kind
    /// gdb's frames numbered without their `#` (apport's retrace, or a ticket's author keeping
    /// GitHub from linking `#1` to an issue): `6  0x00007f93c8aca380 in HMAC_CTX_free () …`.
    private var bare = false
    /// The death line's own line, and how many lines after it are still looked at.
    let line: Int
    private var left = DeathFrames.window
    /// Lines after a death looked at for its frames.
    static let window = 48
    private(set) var function: String?
    private(set) var program: String?
    /// glibc's words on the abort, from its `malloc_printerr (str=… "corrupted double-linked
    /// list")` frame: what the process printed before it died, when the paste has only gdb's.
    private(set) var abort: String?
    /// The JVM's report: its signal and pid, the problematic frame (`C  [libfoo.so+0x…]  f+0x1c`,
    /// `J 17066 c2 org.…GCMBlockCipher.processBlock([BI[BI)V …`), or why it had no memory.
    private(set) var jvmSignal: String?
    private(set) var jvmPid: String?
    private(set) var jvmFrame: String?
    private(set) var jvmMemory: String?
    /// The line before was `# Problematic frame:`.
    private var frameNext = false

    /// Frames looked for after `e`, when it is a death whose stack follows it.
    init?(after e: Event) {
        guard e.code == .daemonDied else { return nil }
        if e.attr("runtime_error") != nil {
            kind = .go
        } else if e.attr("frames") == "hotspot" {
            kind = .hotspot
        } else if e.attr("frames") == "gdb" || e.attr("frames") == "bare" {
            kind = .gdb
            bare = e.attr("frames") == "bare"
        } else {
            return nil
        }
        line = e.line
        // (a format that joins the dump to the panic's record: its lines are in the message)
        for text in e.message.split(separator: "\n").dropFirst() where !done { see(Substring(text)) }
    }

    /// A message that a stack follows (the reader then parses the lines after it whole).
    @inline(__always) static func opens(_ message: UnsafeRawBufferPointer) -> Bool {
        guard message.count > 7 else { return false }
        switch message[0] {
        case UInt8(ascii: "A"):
            return hotspotHead(message)
        case UInt8(ascii: "p"), UInt8(ascii: "P"):
            return message.starts(with: goOpener) || message.starts(with: gdbOpener) || message.starts(with: gdbLiveOpener)
        case UInt8(ascii: "T"):
            // (gdb on a live process: `Thread 2 "coturn" received signal SIGSEGV, …`; the JVM's
            // `There is insufficient memory …`, its `#` lost to Markdown)
            return message.starts(with: threadOpener) && message.firstRange(of: threadSignal) != nil || hotspotHead(message)
        case UInt8(ascii: "#"):
            // (a backtrace pasted without gdb's head: its frame in glibc's `abort`; the JVM's report)
            return hotspotHead(message) || abortFrame(message)
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return abortFrame(message)
        default:
            return false
        }
    }

    /// `#1  0x00007f… in __GI_abort () at abort.c:79`, `1  0x… in abort () from …`: digits,
    /// spaces and an address first (coturn's `7: session …` fails at its colon).
    private static func abortFrame(_ message: UnsafeRawBufferPointer) -> Bool {
        var i = message[0] == UInt8(ascii: "#") ? 1 : 0
        let digits = i
        while i < message.count, message[i] >= 0x30, message[i] <= 0x39 { i += 1 }
        guard i > digits, i < message.count, message[i] == 0x20 else { return false }
        while i < message.count, message[i] == 0x20 { i += 1 }
        guard i + 1 < message.count, message[i] == UInt8(ascii: "0"), message[i + 1] == UInt8(ascii: "x") else { return false }
        let rest = UnsafeRawBufferPointer(rebasing: message[i...])
        return rest.firstRange(of: glibcAbort) != nil || rest.firstRange(of: libcAbort) != nil
    }
    /// The head of the JVM's fatal error report, after its `#` and spaces.
    private static func hotspotHead(_ message: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i < message.count, i < 4, message[i] == UInt8(ascii: "#") || message[i] == 0x20 { i += 1 }
        let rest = UnsafeRawBufferPointer(rebasing: message[i...])
        return rest.starts(with: hotspotCrash) || rest.starts(with: hotspotMemory)
    }
    private static let hotspotCrash = Array("A fatal error has been detected by the Java Runtime Environment".utf8)
    private static let hotspotMemory = Array("There is insufficient memory for the Java Runtime Environment".utf8)
    private static let glibcAbort = Array(" in __GI_abort () ".utf8)
    private static let libcAbort = Array(" in abort () from ".utf8)
    private static let goOpener = Array("panic: ".utf8)
    private static let gdbOpener = Array("Program terminated with signal ".utf8)
    private static let gdbLiveOpener = Array("Program received signal ".utf8)
    private static let threadOpener = Array("Thread ".utf8)
    private static let threadSignal = Array("\" received signal ".utf8)

    var done: Bool { left <= 0 || function != nil && (program != nil || kind == .gdb) || jvmFrame != nil || jvmMemory != nil }

    /// The attributes found, for the death's event.
    var attrs: [(String, String)] {
        let found: [(String, String?)] = [("frame_function", function), ("go_program", program), ("frame_abort", abort),
                                          ("jvm_signal", jvmSignal), ("core_pid", jvmPid), ("jvm_frame", jvmFrame), ("jvm_memory", jvmMemory)]
        return found.compactMap { key, value in value.map { (key, $0) } }
    }

    /// A death's attributes with those found after it (`attrs`) in place of its own of the same
    /// names, the rest kept (the JVM's report found its frame: its event keeps the pid it had).
    static func replacing(_ own: [(String, String)], with found: [(String, String)]) -> [(String, String)] {
        own.filter { a in !found.contains { $0.0 == a.0 } } + found
    }

    /// Reads one more line after the death's; false once nothing more is looked for.
    mutating func see(_ text: Substring) {
        left -= 1
        switch kind {
        case .go: seeGo(text)
        case .gdb: seeGDB(text)
        case .hotspot: seeHotspot(text)
        }
    }

    /// A line of the JVM's report: `#  SIGSEGV (0xb) at pc=0x…, pid=1283, tid=26839`, the frame
    /// after `# Problematic frame:`, `# Native memory allocation (mmap) failed to map 16384 bytes
    /// for committing reserved memory.` (a paste may have lost the `#`, or put a blank line
    /// between each).
    private mutating func seeHotspot(_ line: Substring) {
        var t = line.drop { $0 == "#" || $0 == " " || $0 == "\t" }
        while let last = t.last, last == " " || last == "\r" { t = t.dropLast() }
        guard !t.isEmpty else { return }
        if frameNext {
            frameNext = false
            jvmFrame = Self.hotspotFrame(t)
            return
        }
        if t.hasPrefix("Problematic frame:") {
            frameNext = true
        } else if jvmSignal == nil, let at = t.firstRange(of: " at pc="), let open = t.firstRange(of: " (0x"), open.lowerBound < at.lowerBound {
            let signal = t[..<open.lowerBound]
            if !signal.isEmpty, !signal.contains(" ") { jvmSignal = String(signal) }
            if let pid = t.firstRange(of: "pid=") {
                let digits = t[pid.upperBound...].prefix { $0.isASCII && $0.isNumber }
                if !digits.isEmpty { jvmPid = String(digits) }
            }
        } else if jvmMemory == nil, t.hasPrefix("Native memory allocation (") {
            jvmMemory = String(t.hasSuffix(".") ? t.dropLast() : t)
        }
    }

    /// The problematic frame as a finding names it: a native frame's function and library
    /// (`ff_mjpeg_decode_sos in libjnffmpeg.so`, or the library alone), a Java method
    /// (`org.bouncycastle.crypto.modes.GCMBlockCipher.processBlock`), a VM stub.
    static func hotspotFrame(_ t: Substring) -> String? {
        guard let type = t.first else { return nil }
        let rest = t.dropFirst().drop { $0 == " " }
        switch type {
        case "C", "V":
            // `[libcrypto.so.1.0.0+0xea28a]  HMAC_Init_ex+0x2a` (V: the JVM's own code)
            guard rest.first == "[", let close = rest.firstIndex(of: "]") else { return nil }
            let inside = rest[rest.index(after: rest.startIndex)..<close]
            let library = inside.prefix { $0 != "+" }
            guard !library.isEmpty else { return nil }
            var symbol = rest[rest.index(after: close)...].drop { $0 == " " }
            if let plus = symbol.ranges(of: "+0x").last { symbol = symbol[..<plus.lowerBound] }
            let name = Self.plainSymbol(symbol)
            return name.map { "\($0) in \(library)" } ?? String(library)
        case "J", "j", "A":
            // `J 17066 c2 org.…processBlock([BI[BI)V (117 bytes) @ 0x…`, `j  java.lang.Object.wait(J)V+0`
            for word in rest.split(separator: " ") {
                guard let open = word.firstIndex(of: "("), open != word.startIndex else { continue }
                return (type == "J" ? "the compiled Java method " : "the Java method ") + word[..<open]
            }
            return nil
        case "v":
            // `v  ~StubRoutines::call_stub`, `v  ~BufferBlob::jni_fast_GetLongField`
            let stub = rest.prefix { $0 != " " }
            return stub.isEmpty ? nil : String(stub)
        default:
            return nil
        }
    }

    /// A native symbol without its arguments and templates' parameters; nil when none is
    /// there (`# [ timer expired, abort... ]`, the next line's text run on).
    static func plainSymbol(_ symbol: Substring) -> String? {
        guard let first = symbol.first, first.isLetter || first == "_" else { return nil }
        var out = ""
        var depth = 0
        for c in symbol {
            if c == "<" { depth += 1; continue }
            if c == ">" { depth = max(0, depth - 1); continue }
            if depth > 0 { continue }
            if c == "(" || c == " " { break }
            out.append(c)
        }
        return out.isEmpty ? nil : out
    }

    private mutating func seeGo(_ text: Substring) {
        guard let first = text.first, first != " ", first != "\t", !text.hasPrefix("goroutine "), !text.hasPrefix("created by "),
            !text.hasPrefix("panic("), !text.hasPrefix("panic: "), !text.hasPrefix("[signal ")
        else { return }
        // The function up to its arguments: `(` not opening a pointer receiver `(*T)`.
        var end = text.endIndex
        var i = text.startIndex
        while i < text.endIndex {
            if text[i] == "(" {
                let next = text.index(after: i)
                if next == text.endIndex || text[next] != "*" { end = i; break }
            }
            if text[i] == " " { return }
            i = text.index(after: i)
        }
        guard end != text.endIndex || text.last != ":" else { return }
        let full = text[..<end]
        guard let dot = full.firstIndex(of: "."), dot != full.startIndex else { return }
        let slash = full.lastIndex(of: "/")
        // (the standard library's runtime frames: where the panic was raised, not why)
        let path = full[..<(slash ?? full.startIndex)]
        let firstPart = path.split(separator: "/").first ?? ""
        if slash == nil, Self.runtimePackages.contains(where: { full.hasPrefix($0) }) { return }
        if function == nil { function = Self.shortName(full) }
        // The program: the repository of the first frame outside the standard library and
        // the libraries every Go SFU links (pion's WebRTC, gRPC, …).
        if program == nil, firstPart.contains("."), !Self.libraries.contains(where: { full.hasPrefix($0) }) {
            let parts = full.split(separator: "/")
            if Self.forges.contains(String(parts[0])), parts.count >= 3 {
                program = String(parts[2].split(separator: ".").first ?? parts[2])
            }
        }
    }

    /// `pkg.(*T).Method` of a frame, without its closure suffix (`.func1`, `.func1.2`) and with
    /// the module's major version kept with its name (`dtls/v2.(*Conn).handshake`).
    static func shortName(_ full: Substring) -> String {
        var parts = full.split(separator: "/", omittingEmptySubsequences: false)
        var name = parts.removeLast()
        let package = name.prefix { $0 != "." }
        if let last = parts.last, package.count >= 2, package.first == "v", package.dropFirst().allSatisfy(\.isNumber) { name = last + "/" + name }
        var words = name.split(separator: ".", omittingEmptySubsequences: false)
        while words.count > 2, let w = words.last, w.hasPrefix("func") && w.dropFirst(4).allSatisfy(\.isNumber) || w.allSatisfy(\.isNumber) {
            words.removeLast()
        }
        return words.joined(separator: ".")
    }

    static let runtimePackages = ["runtime.", "sync.", "reflect."]
    static let forges: Set<String> = ["github.com", "gitlab.com", "bitbucket.org", "codeberg.org"]
    static let libraries = ["github.com/pion/", "github.com/gorilla/", "github.com/grpc-ecosystem/", "github.com/prometheus/",
                            "github.com/sirupsen/", "github.com/go-", "github.com/golang/", "github.com/google/", "github.com/redis/",
                            "github.com/twitchtv/", "github.com/urfave/", "github.com/spf13/"]

    /// gdb's frame 0: `#0  janus_videoroom_handler (data=0x0) at …`, `#0  0x… in raise () from …`.
    private mutating func seeGDB(_ text: Substring) {
        var t = text.drop { $0 == " " }
        if t.hasPrefix("#"), let space = t.firstIndex(of: " "), t[t.index(after: t.startIndex)..<space].allSatisfy(\.isNumber) {
            t = t[space...].drop { $0 == " " }
        } else if bare, let space = t.firstIndex(of: " "), space != t.startIndex, t[..<space].allSatisfy(\.isNumber) {
            t = t[space...].drop { $0 == " " }
        } else if !(t.hasPrefix("0x") && left >= Self.window - Self.liveFrameLines) {
            // (gdb stopped in a live process prints the frame it stopped in without its `#0`,
            // a line or two after `Thread 2 "coturn" received signal SIGSEGV`)
            return
        }
        if t.hasPrefix("0x"), let r = t.firstRange(of: " in ") { t = t[r.upperBound...] }
        guard let open = t.firstRange(of: " (") else { return }
        let name = t[..<open.lowerBound]
        if abort == nil, name == "malloc_printerr", let text = Self.quoted(t[open.upperBound...]) { abort = text }
        guard !name.isEmpty, !name.contains(" "), !Self.signalFrames.contains(String(name)), !Self.abortFrames.contains(String(name)) else { return }
        function = String(name)
    }

    /// The string argument of a frame's arguments (`str=str@entry=0x7f… "double free or
    /// corruption (out)") at malloc.c:5350`).
    static func quoted(_ args: Substring) -> String? {
        guard let first = args.firstIndex(of: "\""), let close = args[args.index(after: first)...].firstIndex(of: "\"") else { return nil }
        let text = args[args.index(after: first)..<close]
        return text.isEmpty ? nil : String(text)
    }

    /// Lines after a live process's signal that its bare frame (`0x… in f (…) at …`) is looked for in.
    static let liveFrameLines = 3

    /// Frames of the signal's delivery, not of the fault.
    static let signalFrames: Set<String> = ["??", "raise", "__GI_raise", "abort", "__GI_abort", "pthread_kill", "__pthread_kill_implementation",
                                             "__pthread_kill_internal", "gsignal"]

    /// glibc's frames between `abort` and the code that made it abort (a bad `free`, a heap
    /// it found corrupt, a failed check): a stop on SIGABRT named `__libc_message`, not the
    /// caller of `free` (coturn#368, media-server-node#94).
    static let abortFrames: Set<String> = ["__libc_message", "__libc_message_impl", "malloc_printerr", "__malloc_assert", "__assert_fail_base",
                                            "__assert_fail", "__GI___assert_fail", "__fortify_fail", "__GI___fortify_fail", "__fortify_fail_abort",
                                            "__chk_fail", "__stack_chk_fail", "_int_malloc", "_int_free", "_int_free_merge_chunk",
                                            "_int_free_create_chunk", "_int_realloc", "malloc_consolidate", "unlink_chunk", "malloc",
                                            "__GI___libc_malloc", "__libc_malloc", "free", "__GI___libc_free", "__libc_free", "cfree",
                                            "realloc", "__GI___libc_realloc", "__libc_realloc"]
}
