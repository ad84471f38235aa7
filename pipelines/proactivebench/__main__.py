from core.process_end import end_process
from pipelines.common.driver import main
from pipelines.proactivebench.build import PROACTIVEBENCH

main(PROACTIVEBENCH)
end_process(0)  # a finished build ends without interpreter teardown (core/process_end.py)
