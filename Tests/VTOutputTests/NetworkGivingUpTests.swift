import Foundation
import Testing
import VTCore
@testable import VTOutput

/// What a stream's error says when a call was made to give up: the recording's end (the 5 s a
/// stream has to end after a stop) is named as such, not taken for a receiver that took
/// nothing for the stall time.
@Suite struct NetworkGivingUpTests {
    static let settings = NetworkOutput.Settings(frameRate: .fps30, metadata: ContainerMetadata(encoder: "test", source: "test"),
                                                 connectTimeout: 5, stallTimeout: 5)

    static func reason(_ interrupt: NetworkInterrupt, connecting: Bool = false) -> String? {
        NetworkOutput.givingUp(interrupt, connecting: connecting, what: "write a frame", settings: settings)
    }

    @Test func theRecordingsEndIsNamedAsSuch() {
        let interrupt = NetworkInterrupt()
        // A packet's own time still running, and the time after the stop spent.
        interrupt.giveUp(after: 60)
        interrupt.endBy(0)
        #expect(Self.reason(interrupt) == "the recording ended and the stream could not write a frame in the 0 s a stream has to end")
        let later = NetworkInterrupt()
        later.giveUp(after: 60)
        later.endBy(5)
        #expect(Self.reason(later) == nil, "nothing is due yet")
    }

    @Test func aReceiverThatTakesNothingIsNamedAsSuch() {
        let interrupt = NetworkInterrupt()
        interrupt.giveUp(after: 0)
        #expect(Self.reason(interrupt) == "the receiver took no data for 5 s")
        #expect(Self.reason(interrupt, connecting: true) == "no answer within 5 s")
        // The end given but not reached: the packet's own time is what ran out.
        interrupt.endBy(60)
        #expect(Self.reason(interrupt) == "the receiver took no data for 5 s")
        interrupt.stop()
        #expect(Self.reason(interrupt) == "stopped while trying to write a frame")
    }
}
