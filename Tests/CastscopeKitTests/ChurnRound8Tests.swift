import Foundation
import Testing

@testable import CastscopeKit

/// Issue 15, many sessions open at once (session 48): what the held path writes and reads per
/// line. A log where every line is recognized (thousands of extension sessions interleaved, read
/// with `--threads 1`, from stdin, or as several files) goes through the held spill line by line.
@Suite("churn round 8")
struct ChurnRound8Tests {
    static func event(_ text: Event.Text, _ k: Int, pid: Int) -> Event {
        var e = Event(text: text, side: .extension, time: 1_000_000 + Int64(k) * 250, timeInferred: k % 7 == 0, pid: pid, line: k + 1,
                      order: k, parsedTime: nil, fileIndex: 0)
        e.displayOffset = 3600
        return e
    }

    /// A spilled list of events writes each shared text once (their kind, SDK, process, message
    /// and attributes), not once per event: a held frame line cost its strings written, read
    /// and made again. Read back, every event has its own fields as before.
    @Test func heldEventsWriteEachTextOnce() throws {
        let frame = Event.Text(kind: "frame.sent", sdk: "jitsi", process: "BroadcastExtension",
                               message: "video sample processed successfully, frame written to the host app's socket",
                               attrs: [("length", "10240"), ("host", "localhost")], path: "churn.log")
        let connect = Event.Text(kind: "socket.connect_attempt", sdk: "jitsi", process: nil, message: "Open socket connection",
                                 attrs: [], path: "other.log")
        var events: [Event] = []
        for k in 0..<2_000 { events.append(Self.event(k % 5 == 0 ? connect : frame, k, pid: 1_000 + k % 37)) }
        let spill = try #require(EventSpill())
        let chunk = spill.write(events)
        // Before: every event wrote its message and attributes (~140 bytes of strings each).
        #expect(chunk.length < events.count * 64)
        let back = spill.read(chunk)
        #expect(back.count == events.count)
        for (a, b) in zip(events, back) {
            #expect(a.kind == b.kind && a.code == b.code && a.sdk == b.sdk && a.process == b.process && a.message == b.message)
            #expect(a.attrs.map(\.0) == b.attrs.map(\.0) && a.attrs.map(\.1) == b.attrs.map(\.1))
            #expect(a.source == b.source && a.time == b.time && a.pid == b.pid && a.order == b.order && a.side == b.side)
            #expect(a.timeInferred == b.timeInferred && a.displayOffset == b.displayOffset && a.foldsWhenRepeated == b.foldsWhenRepeated)
        }
        // Two records are read apart, each with its own texts.
        let second = spill.write(Array(events[1_000...]))
        #expect(spill.read(second).map(\.message) == events[1_000...].map(\.message))
        #expect(spill.read(chunk).map(\.sourcePath) == events.map(\.sourcePath))
    }

    /// Two texts whose addresses fall in the same slot of the writer's table (1 pair in 64,
    /// as the heap lays them out: the test above failed now and then in a whole run) are still
    /// each written once, not once per event as they pushed each other out.
    @Test func textsOfOneSlotWrittenOnce() throws {
        var made: [Event.Text] = []
        var pair: (Event.Text, Event.Text)?
        for k in 0..<4_096 where pair == nil {
            let t = Event.Text(kind: "frame.sent", sdk: "jitsi", process: "BroadcastExtension",
                               message: "video sample processed successfully, frame \(k) written to the host app's socket",
                               attrs: [("length", "10240")], path: "churn.log")
            let slot = { (t: Event.Text) in Int(truncatingIfNeeded: UInt(bitPattern: ObjectIdentifier(t)) >> 4) & 63 }
            if let other = made.first(where: { slot($0) == slot(t) }) { pair = (other, t) }
            made.append(t)
        }
        let (a, b) = try #require(pair)
        var events: [Event] = []
        for k in 0..<2_000 { events.append(Self.event(k % 2 == 0 ? a : b, k, pid: 1_000)) }
        let spill = try #require(EventSpill())
        let chunk = spill.write(events)
        #expect(chunk.length < events.count * 64)
        #expect(spill.read(chunk).map(\.message) == events.map(\.message))
    }
}
