import Foundation
import Testing

@testable import CastscopeKit

/// Hunt round 14 (session 58): real pastes from screen-sharing SDKs' issues, each also sent
/// through what a ticket does to text. Its worst: a paste through a rich-text editor, mail or
/// chat, whose spaces came back as no-break spaces.
@Suite("hunt round 14: no-break spaces")
struct HuntRound14Tests: PasteSummarySuite {
    /// twilio/video-quickstart-ios#302 (https://github.com/twilio/video-quickstart-ios/issues/302),
    /// an Xcode console's lines from the host app as posted.
    static let twilio = """
        2018-09-07 15:00:15.607415+0530 ScreenShareTwilio[525:23910] INFO:TwilioVideo:[Signaling]:RESIP::SIP: SipMessage::getContents: got content type (application/room-signaling+json) that is not known, returning as opaque application/octet-stream
         DEBUG:TwilioVideo:[Core]:onTerminated: code: 53002 msg: Signaling connection timed out explanation:
        2018-09-07 15:00:15.657690+0530 ScreenShareTwilio[525:23910] DEBUG:TwilioVideo:[Core]:RoomSignalingImpl: State transition successful: kConnected -> kDisconnecting
        2018-09-07 15:00:15.798638+0530 ScreenShareTwilio[525:24564] DEBUG:TwilioVideo:[Core]:Disconnecting

        """

    /// https://forums.developer.apple.com/forums/thread/706972: the device log's line of
    /// ReplayKit's daemon killed.
    static let jetsam = "osanalyticshelper Process replayd [26715] killed by jetsam reason highwater\n"

    @Test("a no-break space between a line's date and its time, or in place of every space, is read as a space")
    func noBreakSpaces() throws {
        let plain = try analyze(Self.twilio)
        #expect(plain.input["format"] as? String != "plain", "\(plain.input)")
        let first = (plain.json["sessions"] as? [[String: Any]])?.first?["start"] as? String
        #expect(first == "2018-09-07T15:00:15.607415+05:30", "\(plain.json)")
        // U+00A0 between the date and the time (a Teams or Outlook copy): it was plain text,
        // times lost, "(no times in these lines)".
        let nbsp = try analyze(Self.twilio.replacingOccurrences(of: "-07 15:", with: "-07\u{00A0}15:"))
        #expect(nbsp.input["format"] as? String == plain.input["format"] as? String, "\(nbsp.input)")
        #expect((nbsp.json["sessions"] as? [[String: Any]])?.first?["start"] as? String == first, "\(nbsp.json)")
        #expect(nbsp.kinds == plain.kinds)
        // Every space so, and U+202F (macOS's narrow one): nothing was recognized (exit 4).
        for space in ["\u{00A0}", "\u{202F}"] {
            let all = try analyze(Self.jetsam.replacingOccurrences(of: " ", with: space))
            #expect(all.kinds == ["replayd-killed"], "\(all.findings)")
        }
        // A message's own no-break space further on (French punctuation) stays as written.
        let french = try analyze(Self.twilio.replacingOccurrences(of: "not known,", with: "not known\u{00A0}:"))
        #expect(french.input["format"] as? String == plain.input["format"] as? String)
    }

    @Test("an SDK's own word that the screen-share track or its frames failed is screen-share-failed")
    func sdkScreenShareFailures() throws {
        // livekit/client-sdk-swift#281 (in-app screen share, Xcode's console): "nothing recognized".
        let livekit = try analyze("LiveKitSDK : [LiveKit] LocalParticipant.publish(track:publishOptions:) [publish] failed LocalVideoTrack(sid: nil, name: screen_share, source: Source(rawValue: 3)), error: TrackError.timedOut unable to resolve dimensions\n")
        #expect(livekit.messages("screen-share-failed") == ["the host app could not create the screen-sharing stream (TrackError.timedOut unable to resolve dimensions)"], "\(livekit.findings)")
        // The camera's track failing is no screen share's.
        let camera = try analyze("LiveKitSDK : [LiveKit] LocalParticipant.publish(track:publishOptions:) [publish] failed LocalVideoTrack(sid: nil, name: camera, source: Source(rawValue: 1)), error: TrackError.timedOut unable to resolve dimensions\n")
        #expect(camera.kinds.isEmpty, "\(camera.findings)")
        // twilio/twilio-video-ios#279 (AppScreenSource on a Mac with Apple silicon).
        let twilio = try analyze("ERROR:Twilio:[Platform](0x16f44f000): ReplayKit sample has unsupported pixel format.\n")
        #expect(twilio.messages("screen-share-failed") == ["the host app could not create the screen-sharing stream (ReplayKit sample has unsupported pixel format: the SDK's screen source refused ReplayKit's frames)"], "\(twilio.findings)")
    }

    @Test("no-break spaces become spaces however the reads split them; other UTF-8 passes unchanged", arguments: 1...7)
    func streamedAcrossReads(chunk: Int) throws {
        let text = "a\u{00A0}b\u{202F}c é © — \u{00A0}\u{00A0}z\u{00A0}"
        let out = try drain(NoBreakSpaceSource(ChunkedSource(Array(text.utf8), chunk: chunk)))
        #expect(String(decoding: out, as: UTF8.self) == "a b c é © —   z ")
        // A sequence cut off by the end of the input is handed out as it was.
        let cut: [UInt8] = Array("x".utf8) + [0xE2, 0x80]
        #expect(try drain(NoBreakSpaceSource(ChunkedSource(cut, chunk: chunk))) == cut)
        #expect(NoBreakSpaceSource.stripped(Array("1\u{00A0}2".utf8) + [0xC2]) == Array("1 2".utf8) + [0xC2])
    }
}
