import CLibPQ
