/// screen-share-failed: the host app's SDK could not start screen sharing, or says it cannot:
/// the Jitsi Meet SDK's `Screen sharing not supported by the current browser: react-native`
/// (screen sharing not enabled in this app), `Error creating screen-sharing stream …`, the
/// screen-share toggle sent with no listener, react-native-webrtc's missing
/// `RTCScreenSharingExtension` key. Nothing is shared, whatever the extension does. Also iOS's
/// alert that it stopped a broadcast (`Live Broadcast to MyDemoApp has stopped due to : (null)`):
/// the extension ended it with an error, whose description the alert shows (a ReplayKit code's
/// text there is `replaykit-error`'s); and replayd's `Plugin … must have pid! Extension request
/// will fail`: the extension never ran.
struct ScreenShareFailedRule: FindingRule {
    let kind = "screen-share-failed"

    static let kinds = KindSet([.appScreenshareUnsupported, .appScreenshareFailed, .appToggleScreenShareUnhandled, .appConfigError,
                                .broadcastStoppedAlert, .extensionLaunchFailed])

    static func message(_ e: Event) -> String? {
        switch e.code {
        case .appScreenshareUnsupported:
            let browser = String((e.attr("browser") ?? "").drop { $0 == " " })
            return "the Jitsi Meet SDK says screen sharing is not supported in this app (\(browser.isEmpty ? "unknown" : browser)): enable it with the `ios.screensharing.enabled` feature flag and name the Broadcast Upload Extension in the app's Info.plist (`RTCScreenSharingExtension`)"
        case .appScreenshareFailed:
            return "the host app could not create the screen-sharing stream (\(e.attr("error") ?? e.message))"
        case .appToggleScreenShareUnhandled:
            return "the SDK sent its screen-share toggle with no listener registered: the app does not handle it, so the toggle does nothing"
        case .appConfigError:
            return "the host app's configuration lacks what screen sharing needs (\(e.message))"
        case .extensionLaunchFailed:
            let plugin = e.attr("plugin").map { " (\($0.split(separator: " ").joined(separator: " ")))" } ?? ""
            return "the broadcast extension\(plugin) could not be launched: iOS's request to start it failed (\"must have pid\"): it crashed or was refused at launch (a missing framework, its signing, its memory at start): look for its crash report"
        case .broadcastStoppedAlert:
            // (`has stopped due  to : (null)`: the rule ends at `due`)
            var reason = Substring(e.attr("text") ?? "").drop { $0 == " " }
            if reason.hasPrefix("to ") || reason.hasPrefix("to:") { reason = reason.dropFirst(2) }
            reason = reason.drop { $0 == " " || $0 == ":" || $0 == "-" }
            while let last = reason.last, last == " " || last == "." || last == "\"" || last == "\u{201D}" { reason.removeLast() }
            let null = reason.isEmpty || reason == "(null)" || reason == "nil"
            // (`to MyDemoApp is stopped`, `to X has stopped`: the verb's helper is no part of the app)
            var app = e.attr("app")
            for helper in [" is", " has"] where app?.hasSuffix(helper) == true { app = String(app!.dropLast(helper.count)) }
            return "iOS stopped the broadcast and told the user so\(app.map { " (Live Broadcast to \($0))" } ?? ""): the extension ended it with an error "
                + (null ? "that has no description (finishBroadcastWithError with an NSError lacking NSLocalizedDescriptionKey: the alert shows \"(null)\")"
                       : "whose description is \"\(reason)\"")
        default:
            return nil
        }
    }

    func findings(_ r: AnalysisReport, _ t: Thresholds) -> [Finding] {
        // The toggle with no listener may be a moment before the app's listener is set: a warning.
        perLine(r, kinds: Self.kinds) { e in Self.message(e).map { (e.code == .appToggleScreenShareUnhandled ? .warning : .error, $0) } }
    }
}
