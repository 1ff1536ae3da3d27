/// Extension processes whose sessions were all handed on, forgotten once they have been silent
/// for `retireAfter` of log time, so that memory follows the open sessions and not every
/// extension process the logs ever named (issue 15).
///
/// Each broadcast is a new extension process, so a log of 100,000 sessions named 100,000
/// streams, and each kept its slot, its key and its entries in the tables that route a line
/// to it (about 300 bytes; 69 MB resident for a 151 MB log). A retired stream leaves them
/// all: only its pid stays, with its process name (`RetiredProcesses`: a pid reused under another
/// name keeps both; bounded by the device's pid space), so that what a later line of that process does is what it did before:
/// - an extension line opens the stream again as it was when it retired: ended, with nothing
///   in it (a start line opens a new session, any other is placed like a host line);
/// - a kill or exit naming the pid, or the process name whose latest stream it was, is placed
///   like a host line, as it was when it went to the ended stream.
///
/// A stream retires only when its last line learned (`lastLines`: learning runs ahead of
/// feeding) is older than the horizon, so a line of it already learned keeps it.
extension SessionStream {
    /// Retires the streams queued (`takeOut`) whose process has been silent long enough.
    mutating func retireSilent() {
        guard retireHead < retireQueue.count || !retireLater.isEmpty else { return }
        // Many waiting (a busy log's extensions coming and going: ten minutes of churn was
        // 30,000 streams, 10 MB that grew with the file): those silent for a second go, as
        // ended sessions go to the spill while many wait. A retired stream's later lines do
        // what they did before, so the horizon changes memory, not the report.
        let waiting = retireQueue.count - retireHead + retireLater.count
        let horizon = waiting > retireCrowd && retireAfter != .max ? min(retireAfter, Self.crowdedRetireAfter) : retireAfter
        var retired = false
        while let (at, n) = retireLater.first, now.saturatingSince(at) > horizon {
            retireLater.popFirst()
            if retire(n, horizon: horizon) { retired = true }
        }
        while retireHead < retireQueue.count {
            let (n, at) = retireQueue[retireHead]
            guard now.saturatingSince(at) > horizon else { break }
            retireHead += 1
            if retire(n, horizon: horizon) { retired = true }
        }
        if retireHead > 1024 && retireHead * 2 > retireQueue.count {
            retireQueue.removeFirst(retireHead)
            retireHead = 0
        }
        guard retired else { return }
        if retiredSlots > 4096 && retiredSlots * 2 > streams.count { compactStreams() }
    }

    static let crowdedRetireAfter: Int64 = 1_000_000

    /// Retires stream `n` if it may go now (its process silent for `horizon`); true when it did.
    private mutating func retire(_ n: Int, horizon: Int64) -> Bool {
        // A session opened again meanwhile (queued again when it is handed on), a line
        // waits in it, or it was retired already.
        guard n < streams.count, !streamKeys[n].isEmpty, !isCapture[n], asleepSeq[n] == 0, streams[n].phase == .ended,
            streams[n].sessions.isEmpty, streams[n].preamble.isEmpty, streams[n].late.isEmpty,
            let (process, pid) = Self.processAndPid(streamKeys[n])
        else { return false }
        let key = streamKeys[n]
        guard let i = lastLineAt[key] else { return false }
        if let last = lastLines[i], now.saturatingSince(last) <= horizon {
            // It wrote since it was queued (or, with the whole bundle learned, writes
            // later): looked at again once its last line is a horizon old, by that time
            // (requeued a horizon from now, a stream whose pid wrote again hours later was
            // looked at every ten minutes till then: 250,000 sessions on standard input,
            // their pids used again, took 50 s).
            retireLater.push(last, n)
            return false
        }
        streamNumbers[key] = nil
        // Its entries among the streams learned and routed lately go (its slot and its place
        // in `lastLines` are used again); the others stay (forgetting them all at each
        // retirement, once per second of log time, missed a line in two with 5,000 open).
        learned.forget(key: key, pid: pid)
        routed.forget(key: key, pid: pid)
        extensionKeys.remove(key)
        if keyByPid[pid] == key { keyByPid[pid] = nil }
        lastLineAt[key] = nil
        lastLines[i] = nil
        freeLastLines.append(i)
        retiredProcesses.add(pid: pid, process: process)
        streams[n] = SessionBuilder.Stream()
        streamKeys[n] = ""
        retiredSlots += 1
        return true
    }

    /// Takes the retired slots out of the stream tables, the others keeping their order
    /// (`finish` goes through them in order of first appearance), and numbers them again.
    mutating func compactStreams() {
        // A session handed on waits in `live` with its stream's number until its turn (behind
        // an earlier one still open): that slot stays, retired and empty, so the number
        // still names a slot (`endOf` looks there for a session with no end).
        var keep = streamKeys.map { !$0.isEmpty }
        for l in live { keep[l.stream] = true }
        var number = [Int](repeating: -1, count: streams.count)
        var kept = 0
        var stillRetired = 0
        for n in streams.indices where keep[n] {
            if streamKeys[n].isEmpty { stillRetired += 1 }
            number[n] = kept
            if kept != n {
                streams.swapAt(kept, n)
                streamKeys.swapAt(kept, n)
                isCapture.swapAt(kept, n)
                asleepSeq.swapAt(kept, n)
            }
            kept += 1
        }
        streams.removeLast(streams.count - kept)
        streamKeys.removeLast(streamKeys.count - kept)
        isCapture.removeLast(isCapture.count - kept)
        asleepSeq.removeLast(asleepSeq.count - kept)
        var numbers: [String: Int] = [:]
        numbers.reserveCapacity(kept)
        for (key, n) in streamNumbers where number[n] >= 0 { numbers[key] = number[n] }
        streamNumbers = numbers
        for i in live.indices { live[i].stream = number[live[i].stream] }
        retireQueue = retireQueue[retireHead...].compactMap { number[$0.stream] >= 0 ? (number[$0.stream], $0.at) : nil }
        retireLater.compactMapValues { number[$0] >= 0 ? number[$0] : nil }
        retireHead = 0
        retiredSlots = stillRetired
        routed = Recent()
    }

    /// The process name and pid of a stream key (`SessionBuilder.streamKey`: `name[pid]`), nil
    /// for one named by its file.
    static func processAndPid(_ key: String) -> (String, Int)? {
        var bytes = Array(key.utf8)
        guard bytes.last == UInt8(ascii: "]"), let open = bytes.lastIndex(of: UInt8(ascii: "[")), open + 1 < bytes.count - 1 else {
            return nil
        }
        var pid = 0
        for b in bytes[(open + 1)..<(bytes.count - 1)] {
            guard b >= 0x30 && b <= 0x39, pid < Int.max / 10 - 10 else { return nil }
            pid = pid * 10 + Int(b - 0x30)
        }
        bytes.removeLast(bytes.count - open)
        return (String(decoding: bytes, as: UTF8.self), pid)
    }
}

/// Retired extension processes by pid, with their process names (a pid may have named several,
/// one after another; bounded by the device's pid space): what `analyze`'s stream
/// (`SessionStream.retireSilent`) and `tail`'s (`LiveSessions.retire`) remember of a process
/// whose stream they let go of, so that its later lines are placed as they were while it had
/// ended.
struct RetiredProcesses {
    /// Each retired pid's process name, by its number in `names` (12 bytes an entry: the name
    /// lists they were before, an array each, made ~100 bytes a pid, 10 MB once a churning
    /// device had used its 98,000 pids); a pid reused under other names keeps those in `more`.
    private var byPid: [Int: UInt32] = [:]
    private var more: [Int: [UInt32]] = [:]
    /// One string per process name (a name per pid was most of what was left).
    private var names: [String] = []
    private var numbers: [String: UInt32] = [:]

    var isEmpty: Bool { byPid.isEmpty }
    var count: Int { byPid.count }

    mutating func add(pid: Int, process: String) {
        let n: UInt32
        if let known = numbers[process] {
            n = known
        } else {
            n = UInt32(names.count)
            names.append(process)
            numbers[process] = n
        }
        guard let first = byPid[pid] else { byPid[pid] = n; return }
        if first == n || more[pid]?.contains(n) == true { return }
        more[pid, default: []].append(n)
    }

    func contains(pid: Int) -> Bool { byPid[pid] != nil }
    /// (per line of a retired pid: names compared, not hashed)
    func contains(pid: Int, process: String) -> Bool {
        guard let first = byPid[pid] else { return false }
        return names[Int(first)] == process || (more[pid]?.contains { names[Int($0)] == process } ?? false)
    }

    /// Takes the process out (it writes again); false when it was not retired.
    mutating func reopen(pid: Int, process: String) -> Bool {
        guard let first = byPid[pid] else { return false }
        if names[Int(first)] == process {
            if var others = more.removeValue(forKey: pid) {
                byPid[pid] = others.removeFirst()
                if !others.isEmpty { more[pid] = others }
            } else {
                byPid[pid] = nil
            }
            return true
        }
        guard var others = more[pid], let k = others.firstIndex(where: { names[Int($0)] == process }) else { return false }
        others.remove(at: k)
        more[pid] = others.isEmpty ? nil : others
        return true
    }
}
