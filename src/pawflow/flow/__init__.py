"""The flow runtime: FlowFiles through tasks joined by relationships, batch or deployed.

Importing this package registers the built-in task types.
"""

from __future__ import annotations

from pawflow.errors import HopLimitReached
from pawflow.flow import tasks_durable, tasks_general, tasks_interaction  # noqa: F401 - built-ins
from pawflow.flow.board import SignalBoard
from pawflow.flow.definition import FlowDefinition, FlowDefinitionError, load_flow, parse_flow
from pawflow.flow.deployments import Deployment
from pawflow.flow.engine import BatchResult, Ending, run_batch
from pawflow.flow.executors import ExecutorRegistry, FlowDeliveryHandler
from pawflow.flow.expressions import ExpressionError, Template, compile_path, parse_template
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.instance import FlowInstance
from pawflow.flow.registry import (
    TaskRegistry,
    default_registry,
    flow_task,
    import_tasks,
    register_task,
)
from pawflow.flow.service import FlowService
from pawflow.flow.task import (
    FlowScope,
    Property,
    Resumption,
    RuntimeContext,
    Task,
    TaskContext,
    TaskFailed,
)

__all__ = [
    "BatchResult",
    "Deployment",
    "Ending",
    "ExecutorRegistry",
    "ExpressionError",
    "FlowDefinition",
    "FlowDefinitionError",
    "FlowDeliveryHandler",
    "FlowFile",
    "FlowInstance",
    "FlowScope",
    "FlowService",
    "HopLimitReached",
    "Property",
    "Resumption",
    "RuntimeContext",
    "SignalBoard",
    "Task",
    "TaskContext",
    "TaskFailed",
    "TaskRegistry",
    "Template",
    "compile_path",
    "default_registry",
    "flow_task",
    "import_tasks",
    "load_flow",
    "parse_flow",
    "parse_template",
    "register_task",
    "run_batch",
]
