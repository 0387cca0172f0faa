import Testing
import VTCore

@Suite struct SampleAspectRatioTests {
    @Test func sameRatioWhateverTheTerms() {
        #expect(SampleAspectRatio(width: 16, height: 15).hasSameRatio(as: SampleAspectRatio(width: 32, height: 30)))
        #expect(!SampleAspectRatio(width: 16, height: 15).hasSameRatio(as: SampleAspectRatio(width: 15, height: 16)))
        // Products past Int.max compare exactly instead of overflowing.
        let huge = SampleAspectRatio(width: Int.max, height: Int.max - 1)
        #expect(huge.hasSameRatio(as: huge))
        #expect(!huge.hasSameRatio(as: SampleAspectRatio(width: 1, height: 1)))
    }
}
