import Foundation
import Testing
@testable import VTCapture
import VTCore
@testable import VTPictures

#if canImport(Glibc)
import Glibc
#endif

/// Reading motion masks, and what a bad mask or setting says.
@Suite struct MotionMaskTests {
    @Test func rectanglesAreRead() throws {
        let mask = try MotionMask.parse("0,0,640,60; 500,300,140,180")
        #expect(mask.shape == .ignoredRectangles([.init(x: 0, y: 0, width: 640, height: 60),
                                                  .init(x: 500, y: 300, width: 140, height: 180)]))
        #expect(mask.description == "0,0,640,60; 500,300,140,180")
    }

    @Test(arguments: [
        ("0,0,10", "rectangle 1 (0,0,10) has 3 values, not 4"),
        ("0,0,10,10,5", "rectangle 1 (0,0,10,10,5) has 5 values, not 4"),
        ("0,0,10,10;", "rectangle 2 is empty"),
        ("0,,10,10", "rectangle 1 (0,,10,10) is not four whole numbers"),
        ("0,0,10,10;5,5,0,10", "rectangle 2 (5,5,0,10) has no area"),
        ("-5,0,10,10", "rectangle 1 (-5,0,10,10) starts left of or above the picture"),
        ("0,0,9223372036854775807,10", "rectangle 1 (0,0,9223372036854775807,10) is larger than any picture"),
    ])
    func badRectanglesSayWhatIsWrong(text: String, problem: String) {
        #expect(throws: MotionError.maskMalformedRectangles(mask: text, problem: problem)) {
            try MotionMask.parse(text)
        }
    }

    @Test func aBadRectangleSaysHowToWriteOne() {
        let error = MotionError.maskMalformedRectangles(mask: "0,0,10",
                                                        problem: "rectangle 1 (0,0,10) has 3 values, not 4")
        #expect(error.description == "--motion-mask 0,0,10: rectangle 1 (0,0,10) has 3 values, not 4: give the parts "
                + "to ignore as x,y,w,h in picture pixels, several separated by ';' (0,0,640,60;500,300,140,180)")
        #expect(error.exitStatus == .usage)
    }

    @Test func aPGMIsRead() throws {
        let bytes = Array("P5 3 1 # a comment\n 100\n".utf8) + [0, 50, 100]
        let mask = try MotionMask.pgm(bytes, named: "door.pgm")
        #expect(mask.shape == .image(width: 3, height: 1, pixels: [0, 127, 255]))
    }

    /// A header followed by `pixels` zero bytes.
    static func pgm(_ header: String, pixels: Int = 0) -> [UInt8] {
        Array(header.utf8) + [UInt8](repeating: 0, count: pixels)
    }

    static let badPGMs: [(bytes: [UInt8], error: MotionError)] = [
        (pgm("P2\n2 2\n255\n0 0 0 0\n"), .maskNotPGM(mask: "door.pgm")),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A], .maskNotPGM(mask: "door.pgm")),
        ([], .maskNotPGM(mask: "door.pgm")),
        (pgm("P5\n2 2\n65535\n", pixels: 8),
         .maskMalformedPGM(mask: "door.pgm", problem: "largest value 65535 is not 8-bit")),
        (pgm("P5\n4 4\n255\n", pixels: 10),
         .maskMalformedPGM(mask: "door.pgm", problem: "4x4 pixels need 16 bytes after the header, the file has 10")),
        (pgm("P5\nfour 4\n255\n"), .maskMalformedPGM(mask: "door.pgm", problem: "the header has no readable width")),
        (pgm("P5\n4 4\n255"), .maskMalformedPGM(mask: "door.pgm", problem: "the header has no readable largest value")),
        (pgm("P5\n0 4\n255\n"), .maskMalformedPGM(mask: "door.pgm", problem: "a 0x4 picture")),
    ]

    @Test(arguments: badPGMs)
    func badPGMsSayWhatIsWrong(bytes: [UInt8], error: MotionError) {
        #expect(throws: error) { try MotionMask.pgm(bytes, named: "door.pgm") }
    }

    @Test func aMaskThatIsNotAPGMSaysHowToSaveOne() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("door.pgm")
        try Data("P2\n2 2\n255\n0 0 0 0\n".utf8).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: MotionError.self) { try MotionMask.parse(path) }
        #expect(error?.description == "--motion-mask \(path): not a binary PGM (P5): save it as 8-bit grayscale PGM "
                + "(white watched, black ignored)")
        #expect(error?.exitStatus == .usage)
    }

    @Test func aMaskThatCannotBeReadSaysWhy() throws {
        #expect(throws: MotionError.maskUnreadable(mask: "/nonexistent/door.pgm", errno: ENOENT)) {
            try MotionMask.parse("/nonexistent/door.pgm")
        }
        let directory = try TemporaryDirectory()
        #expect(throws: MotionError.maskUnreadable(mask: directory.url.path, errno: EISDIR)) {
            try MotionMask.parse(directory.url.path)
        }
        #expect(MotionError.maskUnreadable(mask: "door.pgm", errno: ENOENT).description
                == "--motion-mask door.pgm: cannot read it: No such file or directory: give a readable 8-bit grayscale "
                + "PGM file or rectangles x,y,w,h[;x,y,w,h…]")
    }

    @Test func aRectangleOutsideThePictureIsRefused() throws {
        let mask = try MotionMask.parse("0,0,10,10;700,0,10,10")
        let error = #expect(throws: MotionError.self) {
            try MotionDetector(settings: .init(mask: mask), width: 640, height: 480)
        }
        #expect(error == .maskOutsidePicture(mask: mask.text, rectangle: .init(x: 700, y: 0, width: 10, height: 10),
                                             width: 640, height: 480))
        #expect(error?.description == "--motion-mask 0,0,10,10;700,0,10,10: rectangle 700,0,10,10 lies outside the "
                + "640x480 picture: give x,y,w,h in pixels of the recorded picture")
        // Partly outside is cut to the picture.
        _ = try MotionDetector(settings: .init(mask: MotionMask.parse("600,400,100,100")), width: 640, height: 480)
    }

    @Test func aMaskOverEverythingIsRefused() throws {
        for mask in [try MotionMask.parse("0,0,320,480;320,0,320,480"),
                     try MotionMask.pgm(Array("P5 2 2 255\n".utf8) + [0, 0, 0, 0], named: "black.pgm")] {
            #expect(throws: MotionError.maskWatchesNothing(mask: mask.text)) {
                try MotionDetector(settings: .init(mask: mask), width: 640, height: 480)
            }
        }
    }

    @Test(arguments: [
        (MotionDetector.Settings(sensitivity: 1.5),
         "motion sensitivity 1.5 is out of range: it takes 0 (least) to 1 (most)"),
        (.init(sensitivity: .nan), "motion sensitivity nan is out of range: it takes 0 (least) to 1 (most)"),
        (.init(minimumArea: 0), "motion minimum area 0.0 is out of range: it takes a part of the picture above 0, at "
         + "most 1 (0.01 is 1 %)"),
        (.init(framesToStart: 0), "motion frames to start 0 is out of range: it takes at least 1"),
        (.init(framesToEnd: 0), "motion frames to end 0 is out of range: it takes at least 1"),
        (.init(framesToAccept: 70000), "motion frames to accept 70000 is out of range: it takes 1 to 65535"),
        (.init(analysisWidth: 8), "motion analysis width 8 is out of range: it takes 32 to 1024 pixels"),
    ])
    func settingsOutOfRangeAreRefused(settings: MotionDetector.Settings, message: String) {
        let error = #expect(throws: MotionError.self) {
            try MotionDetector(settings: settings, width: 640, height: 480)
        }
        #expect(error?.description == message)
        #expect(error?.exitStatus == .usage)
    }

    @Test func theAnalysisPictureKeepsTheAspect() throws {
        let detector = try MotionDetector(settings: .init(), width: 1920, height: 1080)
        #expect((detector.analysisWidth, detector.analysisHeight) == (160, 90))
        let small = try MotionDetector(settings: .init(), width: 96, height: 64)
        #expect((small.analysisWidth, small.analysisHeight) == (96, 64))
        #expect(MotionDetector.Settings.frames(1.5, at: .fps30) == 45)
        #expect(MotionDetector.Settings().pixelThreshold == 24)
    }
}
