import CYUV
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// The parts of the picture motion detection ignores: a tree in the wind, a street beyond the
/// fence, a clock on the wall.
///
/// Given either as rectangles to ignore, in pixels of the recorded picture
/// ("0,0,640,60;500,300,140,180"), or as a picture of the mask, as Motion's mask files are: an
/// 8-bit binary PGM (P5) in which white is watched and black ignored, of any size, stretched
/// over the picture. Either way the mask covers what is ignored.
public struct MotionMask: Sendable, Equatable, CustomStringConvertible {
    /// A rectangle of the picture, in its pixels.
    public struct Rectangle: Sendable, Equatable, CustomStringConvertible {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int

        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        public var description: String { "\(x),\(y),\(width),\(height)" }
    }

    public enum Shape: Sendable, Equatable {
        /// Rectangles to ignore.
        case ignoredRectangles([Rectangle])
        /// A picture of the mask, one byte a pixel from 0 (ignored) to 255 (watched).
        case image(width: Int, height: Int, pixels: [UInt8])
    }

    public let shape: Shape
    /// What the user gave (the rectangles or the file's path), for messages.
    public let text: String

    public init(shape: Shape, text: String) {
        self.shape = shape
        self.text = text
    }

    public var description: String { text }

    /// Reads a mask given on the command line: rectangles "x,y,w,h[;x,y,w,h…]" to ignore, or
    /// the path of an 8-bit binary PGM (white watched, black ignored).
    public static func parse(_ text: String) throws(MotionError) -> MotionMask {
        let rectangleCharacters = Set("0123456789,;+- ")
        if text.contains(","), text.allSatisfy({ rectangleCharacters.contains($0) }) {
            return MotionMask(shape: .ignoredRectangles(try rectangles(text)), text: text)
        }
        return try pgm(try readFile(text), named: text)
    }

    /// Reads rectangles "x,y,w,h[;x,y,w,h…]".
    static func rectangles(_ text: String) throws(MotionError) -> [Rectangle] {
        var found: [Rectangle] = []
        for (index, group) in text.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
            let ordinal = "rectangle \(index + 1)"
            let trimmed = group.trimmingSpaces
            guard !trimmed.isEmpty else {
                throw .maskMalformedRectangles(mask: text, problem: "\(ordinal) is empty")
            }
            let numbers = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingSpaces) }
            guard numbers.count == 4 else {
                throw .maskMalformedRectangles(mask: text, problem: "\(ordinal) (\(trimmed)) has \(numbers.count) "
                                               + "values, not 4")
            }
            guard let x = numbers[0], let y = numbers[1], let width = numbers[2], let height = numbers[3] else {
                throw .maskMalformedRectangles(mask: text, problem: "\(ordinal) (\(trimmed)) is not four whole numbers")
            }
            guard [x, y, width, height].allSatisfy({ $0 <= largestPicture }) else {
                throw .maskMalformedRectangles(mask: text, problem: "\(ordinal) (\(trimmed)) is larger than any picture")
            }
            guard x >= 0, y >= 0 else {
                throw .maskMalformedRectangles(mask: text, problem: "\(ordinal) (\(trimmed)) starts left of or above "
                                               + "the picture")
            }
            guard width > 0, height > 0 else {
                throw .maskMalformedRectangles(mask: text, problem: "\(ordinal) (\(trimmed)) has no area")
            }
            found.append(Rectangle(x: x, y: y, width: width, height: height))
        }
        return found
    }

    /// Reads an 8-bit binary PGM (P5): "P5", width, height and the largest value as decimal
    /// numbers separated by white space (with `#` comments to the end of a line), one white
    /// space character, then a byte a pixel, row by row from the top.
    public static func pgm(_ bytes: [UInt8], named name: String) throws(MotionError) -> MotionMask {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "5") else {
            throw .maskNotPGM(mask: name)
        }
        var at = 2
        func number(_ what: String) throws(MotionError) -> Int {
            // White space and comments before each number.
            while at < bytes.count {
                if bytes[at] == UInt8(ascii: "#") {
                    while at < bytes.count, bytes[at] != UInt8(ascii: "\n") { at += 1 }
                } else if isWhiteSpace(bytes[at]) {
                    at += 1
                } else {
                    break
                }
            }
            var value = 0
            let start = at
            while at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]), value < 1 << 20 {
                value = value * 10 + Int(bytes[at] - UInt8(ascii: "0"))
                at += 1
            }
            guard at > start, at < bytes.count, isWhiteSpace(bytes[at]) else {
                throw .maskMalformedPGM(mask: name, problem: "the header has no readable \(what)")
            }
            return value
        }
        let width = try number("width")
        let height = try number("height")
        let largest = try number("largest value")
        guard (1...largestPicture).contains(width), (1...largestPicture).contains(height) else {
            throw .maskMalformedPGM(mask: name, problem: "a \(width)x\(height) picture")
        }
        guard (1...255).contains(largest) else {
            throw .maskMalformedPGM(mask: name, problem: "largest value \(largest) is not 8-bit")
        }
        // The one white space character that ends the header.
        at += 1
        let needed = width * height
        guard bytes.count - at >= needed else {
            throw .maskMalformedPGM(mask: name, problem: "\(width)x\(height) pixels need \(needed) bytes after the "
                                    + "header, the file has \(bytes.count - at)")
        }
        let pixels = bytes[at..<(at + needed)].map { UInt8(min(255, Int($0) * 255 / largest)) }
        return MotionMask(shape: .image(width: width, height: height, pixels: pixels), text: name)
    }

    /// Which pixels of the analysis picture are watched (1) or ignored (0), row by row.
    ///
    /// The mask is drawn at its own size (the picture's, for rectangles), then shrunk or
    /// stretched to the analysis picture by averaging; an analysis pixel is watched when at
    /// least half of what it covers is.
    func watchedPixels(pictureWidth: Int, pictureHeight: Int,
                       analysisWidth: Int, analysisHeight: Int) throws(MotionError) -> [UInt8] {
        var drawn: [UInt8]
        let drawnWidth: Int, drawnHeight: Int
        switch shape {
        case let .ignoredRectangles(rectangles):
            drawnWidth = pictureWidth
            drawnHeight = pictureHeight
            drawn = [UInt8](repeating: 255, count: pictureWidth * pictureHeight)
            for rectangle in rectangles {
                let right = min(pictureWidth, rectangle.x + rectangle.width)
                let bottom = min(pictureHeight, rectangle.y + rectangle.height)
                guard rectangle.x < right, rectangle.y < bottom else {
                    throw .maskOutsidePicture(mask: text, rectangle: rectangle, width: pictureWidth,
                                              height: pictureHeight)
                }
                drawn.withUnsafeMutableBufferPointer { pixels in
                    for row in rectangle.y..<bottom {
                        memset(pixels.baseAddress! + row * pictureWidth + rectangle.x, 0, right - rectangle.x)
                    }
                }
            }
        case let .image(width, height, pixels):
            drawnWidth = width
            drawnHeight = height
            drawn = pixels
        }
        var scaled = [UInt8](repeating: 0, count: analysisWidth * analysisHeight)
        drawn.withUnsafeBufferPointer { source in
            scaled.withUnsafeMutableBufferPointer { target in
                ScalePlane(source.baseAddress!, Int32(drawnWidth), Int32(drawnWidth), Int32(drawnHeight),
                           target.baseAddress!, Int32(analysisWidth), Int32(analysisWidth), Int32(analysisHeight),
                           kFilterBox)
            }
        }
        let watched = scaled.map { $0 >= 128 ? UInt8(1) : 0 }
        guard watched.contains(1) else { throw .maskWatchesNothing(mask: text) }
        return watched
    }

    /// The largest width or height a mask may give, far beyond any camera's.
    static let largestPicture = 16384

    private static func isWhiteSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// The whole of a file, or as much of it as the largest PGM mask holds (a video given by
    /// mistake is not read into memory). The corresponding C functions are `open` and `read`.
    private static func readFile(_ path: String) throws(MotionError) -> [UInt8] {
        let limit = largestPicture * largestPicture + 4096
        let fd: Int32
        do {
            fd = try systemCall("open") { open(path, O_RDONLY | O_CLOEXEC) }
        } catch {
            throw .maskUnreadable(mask: path, errno: error.errno)
        }
        defer { try? closeDescriptor(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count < limit {
            let read = chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    try systemCall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
                }
            }
            let count: Int
            switch read {
            case let .success(n): count = n
            case let .failure(error): throw .maskUnreadable(mask: path, errno: error.errno)
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else {
            return ""
        }
        return self[first...last]
    }
}
