import VTCore

/// Why motion detection cannot start with the mask or settings it was given: bad usage (exit
/// 2), found before anything is recorded. Each message is one line naming the value, what is
/// wrong with it and how to put it right.
public enum MotionError: ReportableError, Equatable {
    /// The mask names a file that cannot be read.
    case maskUnreadable(mask: String, errno: Int32)
    /// The file does not start with the binary PGM signature "P5".
    case maskNotPGM(mask: String)
    /// A binary PGM whose header or pixels are damaged or not 8-bit; `problem` says which.
    case maskMalformedPGM(mask: String, problem: String)
    /// Rectangles that do not read as `x,y,w,h[;x,y,w,h…]`; `problem` says where.
    case maskMalformedRectangles(mask: String, problem: String)
    /// A rectangle that lies wholly outside the picture.
    case maskOutsidePicture(mask: String, rectangle: MotionMask.Rectangle, width: Int, height: Int)
    /// A mask that leaves no part of the picture watched.
    case maskWatchesNothing(mask: String)
    /// A setting out of its range; `accepted` says what it takes.
    case setting(name: String, value: String, accepted: String)

    public var exitStatus: ExitStatus { .usage }

    public var description: String {
        switch self {
        case let .maskUnreadable(mask, code):
            return "--motion-mask \(mask): cannot read it: \(SystemError.reason(code)): give a readable 8-bit "
                + "grayscale PGM file or rectangles x,y,w,h[;x,y,w,h…]"
        case let .maskNotPGM(mask):
            return "--motion-mask \(mask): not a binary PGM (P5): save it as 8-bit grayscale PGM "
                + "(white watched, black ignored)"
        case let .maskMalformedPGM(mask, problem):
            return "--motion-mask \(mask): damaged PGM: \(problem): save it again as 8-bit grayscale PGM"
        case let .maskMalformedRectangles(mask, problem):
            return "--motion-mask \(mask): \(problem): give the parts to ignore as x,y,w,h in picture "
                + "pixels, several separated by ';' (0,0,640,60;500,300,140,180)"
        case let .maskOutsidePicture(mask, rectangle, width, height):
            return "--motion-mask \(mask): rectangle \(rectangle) lies outside the \(width)x\(height) picture: "
                + "give x,y,w,h in pixels of the recorded picture"
        case let .maskWatchesNothing(mask):
            return "--motion-mask \(mask): the mask leaves nothing of the picture watched: ignore less of it "
                + "(in a PGM, white is watched and black ignored)"
        case let .setting(name, value, accepted):
            return "motion \(name) \(value) is out of range: it takes \(accepted)"
        }
    }
}
