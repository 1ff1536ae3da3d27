import Foundation
import Testing

@testable import CastscopeKit

/// Lines that differ only in a counter, a size or an id (`MessageShape`) fold into one timeline
/// row when a run has many of them; a few stay told apart as they always were.
@Suite("message shapes in the timeline")
struct MessageShapeTests {
    @Test func shapes() {
        #expect(MessageShape.same("open socket connection (attempt 1)", "open socket connection (attempt 72000)"))
        #expect(MessageShape.same("sent 12 frames in 0.3s", "sent 7 frames in 10.25s"))
        #expect(MessageShape.same("id 9e3779b1 closed", "id fbeacdab closed"), "eight hex digits are an id")
        #expect(MessageShape.same("uuid 0C7E1B2A-44F1-4C57-9A7E-8D3B5E1F9A20", "uuid 11111111-2222-3333-4444-555555555555"))
        #expect(!MessageShape.same("id 9e3779b1 closed", "id added closed"), "a word without a digit is itself")
        #expect(!MessageShape.same("open socket connection (attempt 1)", "open socket connection (attempt 1"))
        #expect(!MessageShape.same("failure: socket file missing", "failure: socket file missing 2"))
        #expect(!MessageShape.same("errno=2", "errno:2"))
        #expect(MessageShape.same("", ""))
        #expect(MessageShape.hash("frame 1 of 9") == MessageShape.hash("frame 1000 of 2"))
        #expect(MessageShape.hash("frame 1 of 9") != MessageShape.hash("frame 1 in 9"))
        var s = "a 12 b x-0.5 c 0.25 d v1.2.3"
        s.withUTF8 { u in
            let words = MessageShape.variables(u).map { String(decoding: UnsafeBufferPointer(rebasing: u[$0]), as: UTF8.self) }
            #expect(words == ["12", "x-0.5", "0.25", "v1.2.3"])
            let numbers = MessageShape.variables(u).map { MessageShape.number(u, $0) }
            #expect(numbers == [12, nil, 0.25, nil])
        }
    }

    static func event(_ i: Int, _ kind: String, _ message: String, ms: Int64, side: Side = .extension) -> Event {
        Event(kind: kind, sdk: "jitsi", side: side, time: ms * 1000, process: "Ext", pid: 9, message: message, attrs: [],
              source: SourceRef(path: "t.log", line: i + 1), order: i, parsedTime: nil, fileIndex: 0)
    }

    static func texts(_ events: [Event]) -> [String] { Timeline.entries(events).map { "\($0.count) \($0.text)" } }

    @Test func counterStormIsOneRow() {
        var events: [Event] = []
        for n in 1...5000 {
            events.append(Self.event(events.count, "socket.connect_attempt", "open socket connection (attempt \(n))", ms: Int64(n) * 100))
            events.append(Self.event(events.count, "socket.connect_failed", "failure: socket file missing", ms: Int64(n) * 100 + 1))
        }
        #expect(Self.texts(events) == [
            "10000 open socket connection (attempt 1–5000) ×5000 over 8 m 19.9 s, every 100 ms; "
                + "failure: socket file missing ×5000 over 8 m 19.9 s, every 100 ms"
        ])
    }

    @Test func idsAndSizes() {
        var events: [Event] = []
        for n in 0..<40 {
            let id = String(UInt32(truncatingIfNeeded: (n + 1) &* 2_654_435_761), radix: 16)
            events.append(Self.event(n, "frame.sent", "frame \(n + 1) sent, \(1000 + (n * 37) % 50) bytes, conn \(id)", ms: Int64(n) * 100))
        }
        let first = String(UInt32(truncatingIfNeeded: 1 &* 2_654_435_761), radix: 16)
        let last = String(UInt32(truncatingIfNeeded: 40 &* 2_654_435_761), radix: 16)
        let sizes = (0..<40).map { 1000 + ($0 * 37) % 50 }
        #expect(Self.texts(events) == [
            "40 frame 1–40 sent, \(sizes.min()!)–\(sizes.max()!) bytes, conn \(first)…\(last) ×40 over 3.9 s, every 100 ms"
        ])
    }

    /// A word that does not vary stays as it is; a few texts of one shape (Sendbird's
    /// `exists=0` then `exists=1`) are told apart.
    @Test func fewTextsStayApart() {
        let path = "socketPath=/private/var/mobile/Containers/Shared/AppGroup/0C7E1B2A/sb_ss.sock"
        let events = [
            Self.event(0, "socket.connect_attempt", "SocketClient.connect: \(path), exists=0", ms: 0),
            Self.event(1, "socket.connect_failed", "connect() failed, errno=2 (No such file or directory)", ms: 1),
            Self.event(2, "socket.connect_retry", "Socket connect failed, retrying in 0.3s (retries left: 4)", ms: 2),
            Self.event(3, "socket.connect_attempt", "SocketClient.connect: \(path), exists=1", ms: 300),
        ]
        #expect(Self.texts(events).count == 4)
        var storm: [Event] = []
        for n in 0..<9 {
            storm.append(Self.event(2 * n, "socket.connect_attempt", "SocketClient.connect: \(path), exists=0", ms: Int64(n) * 300))
            storm.append(Self.event(2 * n + 1, "socket.connect_retry", "retrying in 0.3s (retries left: \(8 - n))", ms: Int64(n) * 300 + 1))
        }
        // Nine texts of one shape storm (the path's id does not vary, so it is shown as it is).
        #expect(Self.texts(storm) == [
            "18 SocketClient.connect: \(path), exists=0 ×9 over 2.4 s, every 300 ms; "
                + "retrying in 0.3s (retries left: 0–8) ×9 over 2.4 s, every 300 ms"
        ])
    }

    /// Other lines fold by shape only as a storm; otherwise runs of the same line, as before.
    @Test func otherLines() {
        let a = (0..<30).map { Self.event($0, "relay.note", "queue depth \($0 * 3) at tick \($0)", ms: Int64($0) * 1000) }
        #expect(Self.texts(a) == ["30 queue depth 0–87 at tick 0–29 ×30 over 29.0 s, every 1.0 s"])
        let b = ["write 1", "write 1", "write 2", "write 1", "write 1", "write 1"].enumerated().map {
            Self.event($0.offset, "relay.note", $0.element, ms: Int64($0.offset))
        }
        #expect(Self.texts(b) == ["1 write 1", "1 write 1", "1 write 2", "3 write 1 ×3 over 2 ms, every 1 ms"])
    }
}
