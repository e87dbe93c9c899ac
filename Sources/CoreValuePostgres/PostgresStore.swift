import CoreValue
