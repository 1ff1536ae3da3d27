/// The event kinds the pipeline tests line by line, as small numbers. Two `String`s that are
/// not the same object compare their bytes (kinds over 15 bytes, `socket.connect_attempt`, are
/// not inline), and a `switch` over strings compares them one case after another: on a dense
/// bundle that was a tenth of the instructions. An event's code is decided once, where its
/// kind is (a vocabulary rule's hit, a spilled event read back); `.other` is any kind not here,
/// whose tests stay on the string.
public enum KindCode: UInt8, Sendable, CaseIterable {
    case other
    case broadcastStarted
    case broadcastStopped10001
    case broadcastStoppedByApp
    case broadcastFailed
    case broadcastFinished
    case socketConnectBegin
    case socketInit
    case socketConnectAttempt
    case socketConnectFailed
    case socketConnectRetry
    case socketConnected
    case socketConnectGaveUp
    case socketClosedByPeer
    case socketError
    case socketSendFailed
    case socketClosed
    case frameSent
    case frameChunkWritable
    case frameChunkWritten
    case extensionKilledMemory
    case extensionKilled
    case processExited
    case relayStats
    case relayStalled
    case appCrashed
    case appGroupNotEntitled
    case appSuspended
    case appScreenshareUnsupported
    case appScreenshareFailed
    case appToggleScreenShareUnhandled
    case appConfigError
    case replaydKilled
    case replaydWritebackOverflow
    case replaykitError
    case captureFrame
    case broadcastStoppedAlert
    case extensionLaunchFailed
    case daemonDied
    case daemonStopping
    case appTerminated
    case daemonRestarted
    case appBackgroundExpiring

    /// The kind each code stands for (`""` for `.other`).
    public var name: String { Self.names[Int(rawValue)] }
    private static let names: [String] = [
        "",
        "broadcast.started",
        "broadcast.stopped_10001",
        "broadcast.stopped_by_app",
        "broadcast.failed",
        "broadcast.finished",
        "socket.connect_begin",
        "socket.init",
        "socket.connect_attempt",
        "socket.connect_failed",
        "socket.connect_retry",
        "socket.connected",
        "socket.connect_gave_up",
        "socket.closed_by_peer",
        "socket.error",
        "socket.send_failed",
        "socket.closed",
        "frame.sent",
        "frame.chunk_writable",
        "frame.chunk_written",
        "extension.killed_memory",
        "extension.killed",
        "process.exited",
        "relay.stats",
        "relay.stalled",
        "app.crashed",
        "app_group.not_entitled",
        "app.suspended",
        "app.screenshare_unsupported",
        "app.screenshare_failed",
        "app.toggle_screen_share_unhandled",
        "app.config_error",
        "replayd.killed",
        "replayd.writeback_overflow",
        "replaykit.error",
        "capture.frame",
        "broadcast.stopped_alert",
        "extension.launch_failed",
        "daemon.died",
        "daemon.stopping",
        "app.terminated",
        "daemon.restarted",
        "app.background_expiring",
    ]
    private static let byName: [String: KindCode] = Dictionary(uniqueKeysWithValues: allCases.dropFirst().map { ($0.name, $0) })

    /// The code of `kind` (`.other` when it has none).
    public init(_ kind: String) { self = Self.byName[kind] ?? .other }

    /// One bit per code, for a set of them (`KindSet`).
    @inline(__always) var bit: UInt64 { 1 << UInt64(rawValue) }
}

/// A few kind codes, tested with a mask (`.other` is never in one).
public struct KindSet: Sendable {
    let mask: UInt64
    public init(_ codes: [KindCode]) { mask = codes.filter { $0 != .other }.reduce(0) { $0 | $1.bit } }
    @inline(__always) func contains(_ code: KindCode) -> Bool { mask & code.bit != 0 }
}
