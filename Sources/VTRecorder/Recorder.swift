import VTCore
